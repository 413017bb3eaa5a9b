//! `perf record --threads` directories: the header file plus per-thread streams.

use perfdata::types::{FeatureId, RecordType};
use perfdata::{Place, Recording};
use perfdata_test_support::{fixture_path, require_tools_for, tools};

#[test]
fn a_threads_directory_reads_as_one_recording() {
    let dir = fixture_path("threads.data");
    let rec = Recording::open(&dir).unwrap();
    assert!(rec.is_directory());
    assert!(rec.stream_paths().count() >= 1);
    let data = rec.data().unwrap();
    assert!(data.features.iter().any(|f| f.id == FeatureId::DIR_FORMAT));
    let (mut main, mut streamed, mut samples) = (0, 0, 0);
    rec.for_each_record(&mut |place, _, r, _| {
        match place {
            Place::Main => main += 1,
            Place::DataFile(_) => streamed += 1,
        }
        if r.record_type() == RecordType::SAMPLE {
            samples += 1;
        }
        Ok(true)
    })
    .unwrap();
    assert!(main > 0 && streamed > 0, "main {main}, streams {streamed}");
    // perf script sees the same number of samples.
    if require_tools_for("the comparison with perf script", &[tools::PERF]) {
        let o = std::process::Command::new("perf")
            .args(["script", "-F", "time", "-i"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "perf script failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let perf_samples = String::from_utf8_lossy(&o.stdout).lines().count();
        assert_eq!(samples, perf_samples);
    }
}

#[test]
fn a_single_file_opens_through_the_same_door() {
    let f = fixture_path("plain.data");
    let rec = Recording::open(&f).unwrap();
    assert!(!rec.is_directory());
    let mut n = 0;
    rec.for_each_record(&mut |place, _, _, _| {
        assert_eq!(place, Place::Main);
        n += 1;
        Ok(true)
    })
    .unwrap();
    assert!(n > 10);
    assert!(Recording::open("/nonexistent/perf.data")
        .err()
        .unwrap()
        .to_string()
        .contains("/nonexistent/perf.data"));
}

/// An I/O error stays an I/O error (a caller can match `ErrorKind::Io` and its
/// `io::ErrorKind`), and names the path.
#[test]
fn io_errors_keep_their_kind_and_name_the_path() {
    use perfdata::rt::ErrorKind;
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such.data");
    let e = Recording::open(&missing).err().expect("a missing file");
    match e.kind() {
        ErrorKind::Io(io) => assert_eq!(io.kind(), std::io::ErrorKind::NotFound),
        other => panic!("not an I/O error: {other:?}"),
    }
    assert_eq!(e.file(), Some(missing.as_path()));
    assert!(
        e.to_string().starts_with(&missing.display().to_string()),
        "{e}"
    );

    // A directory whose data.N stream cannot be read: the error is the stream's, kind kept.
    let dir = tmp.path().join("threads.data");
    std::fs::create_dir(&dir).unwrap();
    let fixtures = fixture_path("threads.data");
    std::fs::copy(fixtures.join("data"), dir.join("data")).unwrap();
    std::fs::create_dir(dir.join("data.0")).unwrap(); // a directory where a stream should be
    let e = Recording::open(&dir).err().expect("an unreadable stream");
    assert!(matches!(e.kind(), ErrorKind::Io(_)), "{e:?}");
    assert!(e.to_string().contains("data.0"), "{e}");
}
