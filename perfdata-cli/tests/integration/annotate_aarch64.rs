//! `perfdata annotate` of an aarch64 recording on any host: the program's code (from
//! `llvm-mc`, laid out as an executable) decoded as aarch64 because its object says so,
//! with GNU objdump's text, the samples' shares and `--asm-raw`'s 32-bit words.

use crate::run_perfdata;
use perfdata_test_support::aarch64::{self, BASE, LLVM_MC};
use perfdata_test_support::tools::require_tools;

#[test]
fn an_aarch64_recording_is_annotated_with_aarch64_text() {
    if !require_tools(&[LLVM_MC]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = aarch64::build(dir.path()).unwrap();
    let text = BASE + 0x1000;
    // main: 3 samples at its `b.ne`, 1 at its first load; helper: 2 at its `mov`.
    let ips = [
        text + 0x14,
        text + 0x14,
        text + 0x14,
        text + 0x24,
        text + 0x1c0,
        text + 0x1c0,
    ];
    let data = dir.path().join("perf.data");
    std::fs::write(&data, aarch64::recording(&exe, &ips)).unwrap();
    let file = data.to_str().unwrap();
    let (code, out, err) = run_perfdata(&["annotate", file, "--stdio", "--no-source"], None);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // The temporary directory's path is in the header: the snapshot names it so.
    let out = out.replace(dir.path().to_str().unwrap(), "$TMP");
    insta::assert_snapshot!("aarch64_annotate", out);
    let (code, raw, err) = run_perfdata(
        &["annotate", file, "--asm-raw", "--no-source", "helper"],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    // objdump's word, a space and the tab perf expands: `d65f03c0        ret`; one
    // line per instruction.
    let line = |word: &str| {
        raw.lines()
            .find(|l| l.contains(word))
            .unwrap_or_else(|| panic!("no {word} in\n{raw}"))
            .to_string()
    };
    assert!(
        line("d65f03c0")
            .trim_end()
            .ends_with(": d65f03c0        ret"),
        "{raw}"
    );
    assert!(
        line("d2800540").contains(": d2800540        mov     x0, #0x2a"),
        "{raw}"
    );
    assert!(
        !raw.contains(" c0 03 5f d6"),
        "bytes instead of the word: {raw}"
    );
}
