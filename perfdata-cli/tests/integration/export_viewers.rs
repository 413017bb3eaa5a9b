//! `perfdata export --to pprof|speedscope|firefox` as a user runs it: each format written
//! where `-o` says (nothing left beside it), `--per-process`, and the usage errors. The
//! formats' contents are checked in perfdata-analysis's tests and conformance check 16.

use crate::run_perfdata;

fn wordfreq() -> String {
    perfdata_test_support::sample_path("wordfreq.data")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn export_writes_each_viewer_format() {
    let dir = tempfile::tempdir().unwrap();
    let input = wordfreq();
    for (format, file) in [
        ("pprof", "out.pb.gz"),
        ("speedscope", "out.speedscope.json"),
        ("firefox", "out.firefox.json"),
        ("firefox", "out.firefox.json.gz"),
    ] {
        let out = dir.path().join(file);
        let (code, stdout, stderr) = run_perfdata(
            &[
                "export",
                &input,
                "--to",
                format,
                "-o",
                out.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(code, Some(0), "{format}: {stderr}");
        assert_eq!(stdout, "");
        let bytes = std::fs::read(&out).unwrap();
        if format == "pprof" {
            assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip");
        } else if file.ends_with(".gz") {
            let mut json = vec![];
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut json)
                .unwrap();
            let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
            assert!(v["threads"].is_array(), "{file}");
            // The same profile as without compression.
            let plain = std::fs::read(dir.path().join("out.firefox.json")).unwrap();
            assert!(json == plain, "{file} holds another profile");
        } else {
            let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert!(v.is_object(), "{format}");
        }
    }
    // Only the four outputs: the temporary files were renamed into place.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
}

#[test]
fn export_pprof_per_process_writes_one_file_per_process() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("profiles");
    let (code, _, stderr) = run_perfdata(
        &[
            "export",
            &wordfreq(),
            "--to",
            "pprof",
            "--per-process",
            "-o",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].ends_with("-wordfreq.pb.gz"), "{names:?}");
}

#[test]
fn export_to_a_viewer_refuses_several_inputs_and_misplaced_options() {
    let input = wordfreq();
    let (code, _, stderr) = run_perfdata(
        &["export", &input, &input, "--to", "pprof", "-o", "/dev/null"],
        None,
    );
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("exports one recording (2 given)"),
        "{stderr}"
    );
    let (code, _, stderr) = run_perfdata(
        &[
            "export",
            &input,
            "--to",
            "speedscope",
            "--per-process",
            "-o",
            "/dev/null",
        ],
        None,
    );
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("--per-process is for --to pprof"),
        "{stderr}"
    );
}
