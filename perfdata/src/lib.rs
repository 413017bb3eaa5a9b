//! Read and write every variant of the Linux `perf.data` format, losslessly.
//!
//! Layouts are declared in the spec (`spec/perf_data/`) and generated into the types of
//! [`types`] (every record, feature, attr and sample part: `perfdata::types::Sample`);
//! [`rt`] is the hand-written, layout-free runtime they use; [`container`] is the
//! file-level mechanics (format detection, sections, record framing, compressed streams,
//! attr resolution); [`model`], [`transform`] and [`mod@write`] edit and write. The entry
//! points are re-exported here: [`Recording`], [`PerfData`], [`RecordWalk`],
//! [`StreamReader`], [`PerfFile`].
//!
//! # Reading
//! Open a file or a `perf record --threads` directory, look at the header, and decode the
//! records you need (nothing is decoded that you do not ask for; samples borrow from the
//! memory map):
//! ```
//! use perfdata::types::{FeatureBody, FeatureId, RecordBody, RecordType};
//! use perfdata::Recording;
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/fixtures/callchain.data");
//! let recording = Recording::open(path)?;
//! let data = recording.data()?;
//! for f in &data.features {
//!     if f.id == FeatureId::HOSTNAME {
//!         if let FeatureBody::Hostname(h) = data.feature(f)? {
//!             println!("recorded on {}", h.value.text.to_str_lossy());
//!         }
//!     }
//! }
//! let (mut deepest, mut comms) = (0, 0);
//! data.for_each_record(&mut |_, rec, ctx| {
//!     // The fast path for samples: a zero-copy view, fields read at offsets computed once
//!     // per event.
//!     if let Some(s) = data.sample(&rec, ctx)? {
//!         let chain = s.callchain()?.expect("recorded with -g");
//!         deepest = deepest.max(chain.ips.len());
//!     } else if rec.record_type() == RecordType::COMM {
//!         // Any record decoded into its owned value.
//!         if let RecordBody::Comm(c) = data.decode(&rec, ctx)? {
//!             comms += usize::from(!c.comm.to_str_lossy().is_empty());
//!         }
//!     }
//!     Ok(true) // keep going
//! })?;
//! assert!(deepest > 1 && comms > 0);
//! # Ok::<(), perfdata::Error>(())
//! ```
//! The same walk is a lending cursor, [`container::PerfData::records`]; its adapters go on
//! past damage (`.salvaging()`) or give perf's time order (`.time_ordered()`):
//! ```
//! # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/fixtures/callchain.data"))?;
//! # let data = perfdata::PerfData::open(&bytes)?;
//! use perfdata::RecordWalk; // advance / current / next / for_each
//!
//! let mut records = data.records().time_ordered();
//! let mut last = 0;
//! while let Some(r) = records.next()? {
//!     if let Some(t) = data.time(&r.raw, &r.ctx) {
//!         assert!(t >= last);
//!         last = t;
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//! [`container::StreamReader`] reads a pipe-mode stream from any `Read` with bounded memory,
//! through the same cursor.
//!
//! # Writing
//! Read into an editable [`model::PerfFile`], change it, and save: sizes, offsets, the
//! feature table and every `header.size` are computed; the file is replaced atomically.
//! ```
//! use perfdata::write::{save, WriteOptions};
//! use perfdata::{Endianness, PerfData, PerfFile};
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/fixtures/callchain.data");
//! let bytes = std::fs::read(path)?;
//! let data = PerfData::open(&bytes)?;
//! let mut file = PerfFile::read(&data)?;
//! file.make_typed()?; // decode everything into owned values (optional)
//! # let dir = tempfile::tempdir()?;
//! # let out = dir.path().join("big-endian.data");
//! save(&file, &out, WriteOptions::default().endian(Endianness::Big))?;
//! assert_eq!(PerfData::open(&std::fs::read(&out)?)?.format.endian, Endianness::Big);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Generated code names this crate as `::perfdata`, also when compiled inside it.
extern crate self as perfdata;

pub mod analysis;
pub mod check;
pub mod container;
pub mod convert;
pub mod fuzzing;
/// The code generated from the specs (reached through [`types`] and
/// [`gperftools::types`]).
#[doc(hidden)]
pub mod generated;
pub mod gperftools;
pub mod model;
pub mod placement;
pub mod rt;
pub mod sink;
pub mod stages;
pub mod transform;
pub mod verify;
pub mod write;

/// Every type the perf.data spec (`spec/perf_data/`) declares, generated: the file header,
/// `perf_event_attr`, every `HEADER_*` feature, every record and the SAMPLE with its parts,
/// the sample_id trailer, the open enums and flag sets, and the zero-copy views with their
/// per-event layouts. The layouts are documented in `docs/perf-data-format.md`.
pub mod types {
    pub use crate::generated::perf_data::*;
}

pub use container::{PerfData, RecordWalk, Recording, StreamReader};
pub use model::PerfFile;
pub use rt::{Endianness, Error};
