//! `perfdata script`: a pipe stream on standard input, a reader that goes away, a damaged
//! record, perf's field errors, and the text of the shipped sample's own program (a snapshot:
//! the other objects are this machine's; the conformance suite compares the text with perf's).

use crate::{common, run_perfdata};

fn fixture(name: &str) -> String {
    common::fixture_path(name).to_str().unwrap().to_string()
}

#[test]
fn a_pipe_stream_on_standard_input_prints_as_the_file_does() {
    let path = fixture("pipe-callchain.pipe.data");
    let bytes = std::fs::read(&path).unwrap();
    let (code, from_stdin, stderr) = run_perfdata(&["script", "-"], Some(&bytes));
    assert_eq!(code, Some(0), "{stderr}");
    let (code, from_file, stderr) = run_perfdata(&["script", &path], None);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(from_stdin, from_file);
    assert!(from_file.lines().count() > 10);
}

#[test]
fn a_reader_that_goes_away_ends_it_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args([
            "script",
            &common::sample_path("wordfreq.data").to_string_lossy(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The reader closes its end (as `| head -1` does).
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn a_damaged_record_is_an_error_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixture("callchain.data")).unwrap();
    // The first SAMPLE record's size zeroed: the framing cannot go on.
    let mut offset = None;
    perfdata::Recording::open(fixture("callchain.data"))
        .unwrap()
        .for_each_record(&mut |_, _, rec, _| {
            if rec.record_type() == perfdata::types::RecordType::SAMPLE {
                offset = Some(rec.offset);
                return Ok(false);
            }
            Ok(true)
        })
        .unwrap();
    let offset = offset.expect("a sample");
    bytes[offset as usize + 6] = 0;
    bytes[offset as usize + 7] = 0;
    let bad = dir.path().join("bad.data");
    std::fs::write(&bad, bytes).unwrap();
    let (code, _, stderr) = run_perfdata(&["script", bad.to_str().unwrap()], None);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains(&format!("at byte {:#x}", offset + 6))
            && stderr.contains("SAMPLE")
            && stderr.contains("perf_event_header.size"),
        "{stderr}"
    );
}

#[test]
fn a_field_the_events_cannot_give_is_perf_s_error() {
    let (code, _, stderr) =
        run_perfdata(&["script", "-F", "+weight", &fixture("plain.data")], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("Samples for 'cpu-clock' event do not have WEIGHT attribute set. Cannot print 'weight' field."),
        "{stderr}"
    );
    let (code, _, stderr) =
        run_perfdata(&["script", "-F", "comm,+tid", &fixture("plain.data")], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("Cannot mix +-field with overridden fields"),
        "{stderr}"
    );
}

#[test]
fn the_shipped_sample_s_text() {
    let (code, out, stderr) = run_perfdata(
        &[
            "script",
            &common::sample_path("wordfreq.data").to_string_lossy(),
            "-G",
            "--dsos",
            "wordfreq",
        ],
        None,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let head: String = out.lines().take(40).map(|l| format!("{l}\n")).collect();
    insta::assert_snapshot!(head);
}

#[test]
fn script_arguments_without_a_script_and_two_inputs_are_usage_errors() {
    let plain = fixture("plain.data");
    let (code, _, stderr) = run_perfdata(&["script", &plain, "extra"], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("-s SCRIPT.py"), "{stderr}");
    let (code, _, stderr) = run_perfdata(&["script", &plain, "-i", &plain], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("one recording at a time"), "{stderr}");
    // `-i FILE` alone reads as FILE does.
    let (code, by_flag, stderr) = run_perfdata(&["script", "-i", &plain], None);
    assert_eq!(code, Some(0), "{stderr}");
    let (_, by_file, _) = run_perfdata(&["script", &plain], None);
    assert_eq!(by_flag, by_file);
}

#[test]
fn a_script_without_python_says_what_to_install() {
    // An interpreter that does not exist: the one-line error names what to install.
    let plain = fixture("plain.data");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["script", "-i", &plain, "-s", "x.py"])
        .env("PERFDATA_PYTHON", "/nonexistent/python3")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("install python3 and the perfdata Python package"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
