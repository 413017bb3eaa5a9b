//! Conversions as record-by-record stages, shared by the model's conversions (which run
//! one stage over a [`Builder`](super::Builder)'s records) and the streaming conversion (`convert`, which
//! pushes every record of a memory-mapped input through a chain of them into a sink). A stage keeps nothing per record: what it holds is
//! bounded (a compressed chunk, the decompressor's carry-over, a pipe's header records).
//!
//! Raw record bytes stay in the input's byte order through every stage; the output's order
//! is applied where records are encoded (the compressor and the sink), so a byte-order
//! change composes with compression: decompress → change order → compress in the new order.

mod compress;
mod decompress;
mod relayout;
mod typed;

mod feature_records;
mod pipeline;

pub use compress::{Compress, CompressedKind};
pub use decompress::Decompress;
pub use pipeline::{run_on_model, Emit, Pipeline, Stage};
pub use relayout::{build_id_entry, pipe_event_types, ToFile, ToPipe};
pub use typed::{ToEndian, Typed};
