//! The write side: an editable model of a recording ([`Builder`]), its conversions, the
//! streaming writer ([`Sink`]: file or pipe layout, either byte order), the streaming
//! conversion of a file ([`convert_file`]), and the atomic replace every output goes
//! through ([`save_checked`]: a temporary file, read back, then renamed into place).
//!
//! ```
//! use perfdata::write::{Builder, WriteOptions};
//! use perfdata::{Endianness, PerfData};
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/callchain.data");
//! let bytes = std::fs::read(path)?;
//! let data = PerfData::open(&bytes)?;
//! let mut file = Builder::read(&data)?;
//! file.to_pipe()?; // the conversions are methods of the model
//! # let dir = tempfile::tempdir()?;
//! # let out = dir.path().join("big-endian.pipe.data");
//! file.save(&out, WriteOptions::default().endian(Endianness::Big))?;
//! assert_eq!(PerfData::open(&std::fs::read(&out)?)?.format.endian, Endianness::Big);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Modules, lowest first: `model` (the data), `placement` (where an input's parts sat),
//! `encode` (records and features in the output's byte order), `stages` (record-by-record
//! conversions), `transform` (the model's conversions), `writer_thread` (a file written
//! on another thread), `sink` (the streaming writer), `read_back`, `save` (writing a
//! model; the atomic replace), `convert` (a file streamed through the stages into a sink).

mod convert;
mod encode;
mod model;
mod placement;
mod read_back;
mod save;
mod sink;
pub mod stages;
mod transform;
mod writer_thread;

pub use convert::{
    convert_file, convert_file_reporting, input_compression, unframed_tail, ConvertOptions,
    Converted, Plan,
};
pub use encode::RecordEncoder;
pub use model::{Builder, FeatureData, FeatureItem, RecordData, RecordItem};
pub use placement::{Part, Placement};
pub use read_back::{
    read_back, read_back_file, read_back_file_allowing, read_back_file_carrying, read_back_stream,
    Carried,
};
pub use save::{
    remove_stale_temp_files, save_checked, save_checked_as, save_with, set_output_permissions,
    temp_file_beside, WriteOptions,
};
pub use sink::{FileSink, PipeSink, Sink};
