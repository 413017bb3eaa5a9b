//! The container: everything about perf.data that is the same for every layout — byte
//! order and format detection, sections and the feature table, record framing, payloads
//! after records, compressed streams, and which attr a record belongs to. Every byte
//! layout it reads is decoded by the generated code. Its items are re-exported at the
//! crate root.
//!
//! Modules, lowest first: `origin` (the vocabulary of walks: where a record came from,
//! damage and recovery), `framing` (one record at a time out of a contiguous buffer, and
//! the decode functions), `format`, `session` (attrs and contexts), `decompress`,
//! `split` (simpleperf's SPLIT records joined), `cursor` (framing plus the expansion of
//! compressed records and the joining of SPLIT records over a source), `records`
//! (the cursor plus contexts), `time_order`, `perf_data` (a whole input in memory),
//! `recording` (a path: file or directory), `pipe_reader` (a pipe from any `Read`).

mod cursor;
mod decompress;
mod format;
mod framing;
mod mapped;
mod origin;
mod perf_data;
mod pipe_reader;
mod recording;
mod records;
mod session;
mod split;
mod time_order;

pub use cursor::{ReadSource, RecordCursor, RecordSource, SliceSource, SALVAGE_LOOKAHEAD};
pub(crate) use decompress::{is_compressed, zstd_range, Inflater};
pub(crate) use format::LEGACY_ATTR_SIZES;
pub use format::{detect, Format, Layout};
pub use framing::{
    decode_body, decode_feature, decode_record, RawRecord, RecordFramer, HEADER_SIZE,
};
pub use mapped::{MappedFile, PopulateAhead, ReleaseBehind};
pub use origin::{Damage, Origin, Recovery};
pub use perf_data::{FeatureSection, PerfData, RecordFn};
pub use pipe_reader::{PipeReader, PipeRecord};
pub use recording::{ChainedRecords, Place, RecordVisitor, Recording};
pub use records::{Record, RecordWalk, Records};
pub(crate) use session::record_ctx;
pub use session::{AttrPlan, EventAttr, RecordCtx, Session};
pub use time_order::TimeOrdered;
