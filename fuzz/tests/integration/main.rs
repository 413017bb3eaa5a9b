//! Replays of the fuzz targets' bodies on stable, as one binary (`hostile_input_bounds` is
//! a binary of its own: a counting global allocator).

use perfdata_test_support as common;

mod format_regressions;
mod spec_regressions;
