//! The format crate's integration tests, as one binary (one link for
//! all of them); `convert_memory` is a binary of its own (a counting global allocator).

use perfdata_test_support as common;

mod codegen_behaviour;
mod conversion_matrix;
mod conversions;
mod cut_and_hostile_files;
mod directory;
mod editing;
mod gperftools_real;
mod gperftools_spec_macro;
mod header_text;
mod kernel_struct_layouts;
mod new_feature_is_a_spec_edit;
mod old_and_new_producers;
mod ordered;
mod placement;
mod real_files_roundtrip;
mod record_cursor;
mod rewrite;
mod simpleperf;
mod streaming;
mod streaming_convert;
mod tracepoint_print;
mod views;
