//! Symbols from elsewhere. A program recorded here (`perf record -g`, `perf archive`),
//! then its binary and the build-id cache hidden, reports and collapses the same through
//! each source: the archive read in place (`--symbols-from`), a copy of the machine's
//! files (`--symfs`), a debug-file directory, and a real debuginfod server (elfutils')
//! started on a free port for the test. A debuginfod server that hangs, answers 404 or
//! 500, sends another object, or is not there costs one message each and leaves the rest
//! of the report as it is (an in-test server on 127.0.0.1).
//!
//! Needs `perf` (able to record), `gcc` and `debuginfod` (`.ci/run` installs them); a
//! machine without them skips the live test and says why (CI, with
//! `PERFDATA_TOOLS_REQUIRED=1`, fails instead).

use perfdata_analysis::symbols::elf::ElfInfo;
use perfdata_test_support::{require_tools, tools};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs `perfdata` with `HOME` (so `~/.debug`) set to `home`, no build-id directory or
/// debuginfod servers from the environment but those in `env`.
fn perfdata(home: &Path, env: &[(&str, &str)], args: &[&str]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perfdata"));
    cmd.args(args)
        .env("HOME", home)
        .env_remove("PERF_BUILDID_DIR")
        .env_remove("DEBUGINFOD_URLS")
        .env_remove("XDG_CACHE_HOME");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `perfdata ARGS` that must succeed: its stdout.
fn perfdata_ok(home: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let (ok, out, err) = perfdata(home, env, args);
    assert!(ok, "perfdata {args:?} failed: {err}");
    out
}

const PROGRAM: &str = r#"
static volatile unsigned long sink;
__attribute__((noinline)) void leaf(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void middle(void) { for (int i = 0; i < 60; i++) leaf(1000000); }
__attribute__((noinline)) void other(void) { for (int i = 0; i < 30; i++) leaf(1000000); }
int main(void) { middle(); other(); return 0; }
"#;

/// A debuginfod process, stopped when dropped.
struct Debuginfod(Child);

impl Drop for Debuginfod {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port nothing listens on (just freed by the system).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The status code of a GET of `path` on 127.0.0.1:`port`, if it answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

#[test]
fn a_recording_reports_the_same_through_every_symbol_source() {
    if !require_tools(&[tools::PERF_RECORD, tools::GCC, tools::DEBUGINFOD]) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let home = dir.join("home");
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(dir.join("prog.c"), PROGRAM).unwrap();
    let prog = dir.join("bin/prog");
    let gcc = Command::new("gcc")
        .args([
            "-O1",
            "-g",
            "-fno-omit-frame-pointer",
            "-Wl,--build-id",
            "-o",
        ])
        .arg(&prog)
        .arg(dir.join("prog.c"))
        .status()
        .unwrap();
    assert!(gcc.success());
    let data = dir.join("perf.data");
    let record = Command::new("perf")
        .args(["record", "-q", "-g", "-o"])
        .arg(&data)
        .arg(&prog)
        .env("HOME", &home)
        .env_remove("PERF_BUILDID_DIR")
        .output()
        .unwrap();
    assert!(
        record.status.success(),
        "perf record: {}",
        String::from_utf8_lossy(&record.stderr)
    );
    let archive = Command::new("perf")
        .arg("archive")
        .arg(&data)
        .env("HOME", &home)
        .env_remove("PERF_BUILDID_DIR")
        .output()
        .unwrap();
    assert!(archive.status.success(), "{archive:?}");
    let tarball = dir.join("perf.data.tar.bz2");
    assert!(tarball.is_file());
    let data_s = data.to_str().unwrap();
    let on_this_machine = (
        perfdata_ok(&home, &[], &["report", data_s]),
        perfdata_ok(&home, &[], &["collapse", data_s]),
    );
    assert!(
        on_this_machine.0.contains("[.] leaf"),
        "{}",
        on_this_machine.0
    );

    // The recording machine's files, as another machine gets them: a root copy for
    // --symfs (each recorded object and its system debug file), a debug-file directory,
    // and what a debuginfod server serves.
    let prog_id = {
        // Every mapped file (perf script's MMAP lines end with the path), and its system
        // debug file by build id.
        let out = Command::new("perf")
            .args(["script", "--show-mmap-events", "-i", data_s])
            .env("HOME", &home)
            .output()
            .unwrap();
        let script = String::from_utf8_lossy(&out.stdout).into_owned();
        let symfs = dir.join("symfs");
        let mut paths: Vec<&str> = script
            .lines()
            .filter(|l| l.contains("PERF_RECORD_MMAP"))
            .filter_map(|l| l.split_whitespace().last())
            .filter(|p| p.starts_with('/') && Path::new(p).is_file())
            .collect();
        paths.sort_unstable();
        paths.dedup();
        let copy = |from: &Path, to: PathBuf| {
            if from.is_file() {
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(from, to).unwrap();
            }
        };
        for path in &paths {
            copy(Path::new(path), symfs.join(&path[1..]));
            if let Some(id) = ElfInfo::read_build_id(Path::new(path)) {
                let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
                let debug = format!("usr/lib/debug/.build-id/{}/{}.debug", &id[..2], &id[2..]);
                copy(&Path::new("/").join(&debug), symfs.join(&debug));
            }
        }
        assert!(paths.contains(&prog.to_str().unwrap()), "{script}");
        let id = ElfInfo::read_build_id(&prog).expect("the program has a build id");
        id.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let debug_dir = dir.join("debug-files");
    let by_id = debug_dir.join(format!(
        ".build-id/{}/{}.debug",
        &prog_id[..2],
        &prog_id[2..]
    ));
    std::fs::create_dir_all(by_id.parent().unwrap()).unwrap();
    std::fs::copy(&prog, &by_id).unwrap();
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::copy(&prog, served.join("prog")).unwrap();

    // Hidden: the program and the build-id cache.
    std::fs::remove_file(&prog).unwrap();
    std::fs::remove_dir_all(home.join(".debug")).unwrap();
    let hidden = perfdata_ok(&home, &[], &["report", data_s]);
    assert_ne!(
        hidden, on_this_machine.0,
        "hiding the program changed nothing"
    );
    assert!(!hidden.contains("[.] leaf"), "{hidden}");

    let same = |what: &str, env: &[(&str, &str)], extra: &[&str]| {
        let mut args = vec!["report", data_s];
        args.extend_from_slice(extra);
        assert_eq!(
            perfdata_ok(&home, env, &args),
            on_this_machine.0,
            "report, {what}"
        );
        args[0] = "collapse";
        assert_eq!(
            perfdata_ok(&home, env, &args),
            on_this_machine.1,
            "collapse, {what}"
        );
    };
    let tar_s = tarball.to_str().unwrap();
    same("perf archive", &[], &["--symbols-from", tar_s]);
    let info = perfdata_ok(&home, &[], &["info", data_s, "--symbols-from", tar_s]);
    assert!(
        info.contains(&format!("{}: {tar_s}:", prog.display())),
        "{info}"
    );
    same(
        "symfs",
        &[],
        &["--symfs", dir.join("symfs").to_str().unwrap()],
    );
    same(
        "debug-file directory",
        &[],
        &["--debug-file-directory", debug_dir.to_str().unwrap()],
    );

    // debuginfod: elfutils' server, scanning the served directory once.
    let port = free_port();
    let server = Debuginfod(
        Command::new("debuginfod")
            .args([
                "-p",
                &port.to_string(),
                "-t",
                "0",
                "-g",
                "0",
                "-c",
                "1",
                "-F",
                "-d",
            ])
            .arg(dir.join("debuginfod.sqlite"))
            .arg(&served)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let ready = Instant::now();
    let probe = format!("/buildid/{prog_id}/executable");
    while http_status(port, &probe) != Some(200) {
        assert!(
            ready.elapsed() < Duration::from_secs(60),
            "debuginfod did not serve the program within 60 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let url = format!("http://127.0.0.1:{port}");
    let cache = dir.join("debuginfod-cache");
    let env = [
        ("DEBUGINFOD_URLS", url.as_str()),
        ("DEBUGINFOD_CACHE_PATH", cache.to_str().unwrap()),
    ];
    same("debuginfod", &env, &[]);
    assert!(cache.join(&prog_id).join("debuginfo").is_file());
    let info = perfdata_ok(&home, &env, &["info", data_s]);
    assert!(info.contains("(debuginfod)"), "{info}");
    // Its cache serves once the server is gone.
    drop(server);
    same("debuginfod's cache", &env, &[]);
}

/// What the in-test server does with a request.
#[derive(Clone, Copy)]
enum Misbehaviour {
    Hang,
    NotFound,
    Fails,
    WrongObject,
}

/// A server on 127.0.0.1 that misbehaves on every request; stopped when dropped.
struct BadServer {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BadServer {
    fn start(how: Misbehaviour) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut held = vec![];
            for conn in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let mut request = vec![];
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let reply = |conn: &mut TcpStream, status: &str, body: &[u8]| {
                    let _ = write!(
                        conn,
                        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = conn.write_all(body);
                };
                match how {
                    Misbehaviour::Hang => held.push(conn),
                    Misbehaviour::NotFound => reply(&mut conn, "404 Not Found", b""),
                    Misbehaviour::Fails => reply(&mut conn, "500 Internal Server Error", b"oops"),
                    Misbehaviour::WrongObject => {
                        let other = std::fs::read("/bin/true").unwrap();
                        reply(&mut conn, "200 OK", &other)
                    }
                }
            }
        });
        BadServer {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for BadServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_debuginfod_server_in_trouble_costs_a_message_and_nothing_else() {
    // The shipped sample without its build-id cache and with an empty home: its program
    // is found nowhere, so debuginfod is asked for it.
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("wordfreq.data");
    let sample = perfdata_test_support::sample_path("wordfreq.data");
    std::fs::copy(sample, &data).unwrap();
    let data_s = data.to_str().unwrap();
    let home = t.path();
    let without = perfdata_ok(home, &[], &["report", data_s]);
    let cache = t.path().join("cache");
    let cases = [
        (
            Some(Misbehaviour::Hang),
            "no answer within 1 s (DEBUGINFOD_TIMEOUT)",
        ),
        (Some(Misbehaviour::NotFound), "answered 404 Not Found"),
        (
            Some(Misbehaviour::Fails),
            "answered 500 Internal Server Error; not asked again",
        ),
        (
            Some(Misbehaviour::WrongObject),
            "sent an object with build id",
        ),
        (None, "not asked again"),
    ];
    for (how, message) in cases {
        let server = how.map(BadServer::start);
        let port = server.as_ref().map_or_else(free_port, |s| s.port);
        let url = format!("http://127.0.0.1:{port}");
        let env = [
            ("DEBUGINFOD_URLS", url.as_str()),
            ("DEBUGINFOD_CACHE_PATH", cache.to_str().unwrap()),
            ("DEBUGINFOD_TIMEOUT", "1"),
        ];
        let started = Instant::now();
        let (ok, out, err) = perfdata(home, &env, &["report", data_s]);
        assert!(ok, "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "took {:?}",
            started.elapsed()
        );
        assert!(
            err.contains("perfdata: debuginfod: ") && err.contains(message),
            "expected {message:?} in: {err}"
        );
        assert_eq!(out, without, "the report changed ({message})");
        // Nothing of a refused or failed answer stays in the cache.
        let cached = std::fs::read_dir(&cache)
            .map(|d| {
                d.flatten()
                    .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten())
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(cached, 0, "{message}");
    }
}
