//! The container: everything about perf.data that is the same for every layout — byte
//! order and format detection, sections and the feature table, record framing, payloads
//! after records, compressed streams, and which attr a record belongs to. Every byte
//! layout it reads is decoded by the generated code.
//!
//! Records are read by one lending cursor, [`RecordCursor`] (framing plus the expansion of
//! compressed records) over a [`RecordSource`]: [`SliceSource`] for an input in memory,
//! [`ReadSource`] for any `Read`. [`Records`] adds each record's decoding context and is
//! walked through [`RecordWalk`];
//! [`Records::salvaging`], [`Records::time_ordered`] ([`Ordered`]), [`RecordingRecords`]
//! (a `--threads` directory) and [`StreamReader`] are adapters over it.

pub mod cursor;
pub mod decompress;
pub mod file;
pub mod format;
pub mod mapped;
pub mod ordered;
pub mod recording;
pub mod records;
pub mod session;
pub mod stream;
pub mod stream_reader;

pub use cursor::{ReadSource, RecordCursor, RecordSource, SliceSource};
pub use file::{Damage, FeatureSection, Origin, PerfData, RecordFn, Recovery};
pub use format::{detect, Format, Layout};
pub use mapped::MappedFile;
pub use ordered::Ordered;
pub use recording::{Place, Recording, RecordingRecords};
pub use records::{Record, RecordWalk, Records};
pub use session::{AttrPlan, EventAttr, RecordCtx, Session};
pub use stream::{RawRecord, RecordWalker};
pub use stream_reader::{StreamReader, StreamRecord};
