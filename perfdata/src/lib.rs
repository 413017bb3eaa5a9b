//! Read and write every variant of the Linux `perf.data` format, losslessly.
//!
//! Layouts are declared in the spec (`spec/perf_data/`) and generated into the types of
//! [`types`] (every record, feature, attr and sample part: `perfdata::types::Sample`);
//! [`rt`] is the hand-written, layout-free runtime they use. The reading side — format
//! detection, sections, record framing, compressed streams, attr resolution, time order —
//! is at the crate root; [`mod@write`] edits, converts and writes; [`check`] lists a
//! file's problems; [`events`] and [`tracepoint`] name events and tracepoint fields;
//! [`dump`] prints a recording as text or JSON, [`header_text`] its header as perf does;
//! [`gperftools`] (feature `gperftools`) and [`jitdump`] (feature `jitdump`: what JIT
//! compilers write for perf) are the other formats.
//!
//! # Which entry point
//! * [`Recording`]: a path on disk — a perf.data file (either layout) or a
//!   `perf record --threads` directory. It maps the files and hands out a [`PerfData`];
//!   use it whenever you start from a path.
//! * [`PerfData`]: one input already in memory (bytes or a map): header, attrs, features,
//!   and the walks over its records ([`PerfData::records`], [`RecordWalk`]).
//! * [`PipeReader`]: a pipe-layout stream from any `Read` (standard input), in bounded
//!   memory, when the input cannot be mapped.
//! * [`write::Builder`]: an owned, editable copy of a recording to change and write back.
//!
//! # Reading
//! Open a file or a `perf record --threads` directory, look at the header, and decode the
//! records you need (nothing is decoded that you do not ask for; samples borrow from the
//! memory map):
//! ```
//! use perfdata::types::{FeatureBody, FeatureId, RecordBody, RecordType};
//! use perfdata::Recording;
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/callchain.data");
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
//! The same walk is a lending cursor, [`PerfData::records`]; its adapters go on
//! past damage (`.salvaging()`) or give perf's time order (`.time_ordered()`):
//! ```
//! # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/callchain.data"))?;
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
//! [`PipeReader`] reads a pipe-mode stream from any `Read` with bounded memory,
//! through the same cursor.
//!
//! # Writing
//! Read into an editable [`write::Builder`], change it, and save: sizes, offsets, the
//! feature table and every `header.size` are computed; the file is replaced atomically.
//! ```
//! use perfdata::write::{Builder, WriteOptions};
//! use perfdata::{Endianness, PerfData};
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/callchain.data");
//! let bytes = std::fs::read(path)?;
//! let data = PerfData::open(&bytes)?;
//! let mut file = Builder::read(&data)?;
//! file.make_typed()?; // decode everything into owned values (optional)
//! # let dir = tempfile::tempdir()?;
//! # let out = dir.path().join("big-endian.data");
//! file.save(&out, WriteOptions::default().endian(Endianness::Big))?;
//! assert_eq!(PerfData::open(&std::fs::read(&out)?)?.format.endian, Endianness::Big);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

// Generated code names this crate as `::perfdata`, also when compiled inside it.
extern crate self as perfdata;

pub mod check;
mod container;
pub mod dump;

pub mod events;
mod generated;
#[cfg(feature = "gperftools")]
pub mod gperftools;
pub mod header_text;
#[cfg(feature = "jitdump")]
pub mod jitdump;
pub mod rt;
pub mod tracepoint;
pub mod write;

/// Every type the perf.data spec (`spec/perf_data/`) declares, generated: the file header,
/// `perf_event_attr`, every `HEADER_*` feature, every record and the SAMPLE with its parts,
/// the sample_id trailer, the open enums and flag sets, and the zero-copy views with their
/// per-event layouts. The layouts are documented in `docs/perf-data-format.md`.
pub mod types {
    pub use crate::generated::perf_data::*;
}

pub use container::*;
#[doc(no_inline)]
pub use rt::{Endianness, Error};
