//! The `jitdump` target: perf's jitdump files (`perfdata::jitdump`), as JIT compilers
//! write them for perf. A file reads (up to a cut, which is an error naming its place) or
//! is refused; what reads is written back, and that is a fixed point: read again, the
//! same records, written again, the same bytes; and an input that reads whole is written
//! back byte for byte (every byte after a record's known fields is kept as its tail).
//! The dump prints it as text and JSON.

use perfdata::dump::DumpOptions;
use perfdata::jitdump::{dump_jitdump, JitDump};

/// Inputs larger than this are cut.
const MAX_INPUT: usize = 1 << 20;
/// Records printed by the dumps.
const DUMP_LIMIT: u64 = 16;

pub fn jitdump(input: &[u8]) {
    let input = &input[..input.len().min(MAX_INPUT)];
    let Ok((dump, cut)) = JitDump::parse_partial(input) else {
        return;
    };
    if let Some(e) = &cut {
        assert!(e.offset().is_some(), "a cut without a place: {e}");
    }
    let bytes = dump.encode().expect("what was read is written");
    let again = JitDump::parse(&bytes).expect("what was written reads whole");
    assert_eq!(again, dump, "written and read back, another file");
    assert_eq!(again.encode().unwrap(), bytes, "not a fixed point");
    if cut.is_none() {
        assert!(
            bytes == input,
            "a whole file not written back byte for byte"
        );
    }
    // The printers of the first records (code bytes as hex too): every kind of line
    // comes early in a small input; the rest only repeats them.
    for json in [false, true] {
        let opts = DumpOptions {
            json,
            payloads: true,
            limit: Some(DUMP_LIMIT),
            ..DumpOptions::default()
        };
        dump_jitdump(input, &opts, std::io::sink()).expect("a readable file dumps");
    }
}
