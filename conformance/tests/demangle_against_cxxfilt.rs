//! perfdata's C++ names against `c++filt` (issue 37): every mangled name of this
//! machine's libstdc++ (its dynamic symbols, and its debug file's symbols when one is
//! installed) and of C++ programs of ours (their symbols and DWARF linkage names, which
//! name inline frames), demangled by `perfdata_analysis::symbols::demangle` and by
//! `c++filt -i -p` — libiberty with perf's flags: no parameters (`DMGL_PARAMS` off) and
//! no implementation details (`DMGL_VERBOSE` off, so `Ss` is `std::string`).
//!
//! No name may stay mangled where c++filt demangles it, and the names must agree on at
//! least 99.9%. Needs binutils (`c++filt`, `nm`, `readelf`) and g++; skips, saying so,
//! without them (a failure under `PERFDATA_TOOLS_REQUIRED`).

use perfdata_test_support::{require_tools, tools};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn tool_missing(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_or(true, |s| !s.success())
}

fn stdout_of(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The names `nm` lists as defined (`nm -D` for dynamic symbols), version suffixes off.
fn nm_names(args: &[&str], path: &Path, into: &mut BTreeSet<String>) -> usize {
    let Some(text) = stdout_of(Command::new("nm").args(args).arg(path)) else {
        return 0;
    };
    let before = into.len();
    for line in text.lines() {
        if let Some(name) = line.split_whitespace().nth(2) {
            into.insert(name.split('@').next().unwrap_or(name).to_string());
        }
    }
    into.len() - before
}

/// The `DW_AT_linkage_name` strings of an object's DWARF (the names of inline frames).
fn linkage_names(path: &Path, into: &mut BTreeSet<String>) -> usize {
    let Some(text) = stdout_of(Command::new("readelf").arg("--debug-dump=info").arg(path)) else {
        return 0;
    };
    let before = into.len();
    for line in text.lines().filter(|l| l.contains("DW_AT_linkage_name")) {
        if let Some(name) = line.split_whitespace().last() {
            into.insert(name.to_string());
        }
    }
    into.len() - before
}

/// The separate debug file of an object, by its build id, when one is installed.
fn debug_file(path: &Path) -> Option<PathBuf> {
    let notes = stdout_of(Command::new("readelf").arg("-n").arg(path))?;
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))?
        .trim();
    let p = PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        id.get(..2)?,
        id.get(2..)?
    ));
    p.exists().then_some(p)
}

/// A legacy Rust name (`_ZN…17h<hash>E`): perf demangles those as Rust, not C++.
fn legacy_rust(name: &str) -> bool {
    name.len() > 20 && name.ends_with('E') && name[name.len() - 20..].starts_with("17h")
}

#[test]
fn names_agree_with_cxxfilt() {
    if !require_tools(&[tools::BINUTILS, tools::GXX]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut names = BTreeSet::new();
    let mut sources = vec![];

    // This machine's libstdc++, as g++ links it.
    let libstdcxx = stdout_of(Command::new("g++").arg("-print-file-name=libstdc++.so.6"))
        .map(|s| PathBuf::from(s.trim()))
        .filter(|p| p.is_absolute() && p.exists());
    match &libstdcxx {
        Some(lib) => {
            let n = nm_names(&["-D", "--defined-only"], lib, &mut names);
            sources.push(format!("{}: {n} dynamic symbols", lib.display()));
            match debug_file(lib) {
                Some(dbg) => {
                    let n = nm_names(&["--defined-only"], &dbg, &mut names)
                        + linkage_names(&dbg, &mut names);
                    sources.push(format!("its debug file {}: {n} more", dbg.display()));
                }
                None => sources.push("no debug file of it installed".into()),
            }
        }
        None => sources.push("libstdc++.so.6 not found by g++".into()),
    }

    // C++ programs of ours, with g++ (and clang++ when installed): their symbols and
    // the linkage names of their DWARF.
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    for compiler in ["g++", "clang++"] {
        if compiler != "g++" && tool_missing(compiler) {
            sources.push(format!("{compiler}: not installed"));
            continue;
        }
        for src in ["cpp_operators.cpp", "dwarf_cpp.cpp"] {
            let exe = dir.path().join(format!("{compiler}-{src}"));
            let built = Command::new(compiler)
                .args(["-O2", "-g", "-o"])
                .arg(&exe)
                .arg(programs.join(src))
                .status()
                .is_ok_and(|s| s.success());
            assert!(built, "{compiler} could not build {src}");
            let n =
                nm_names(&["--defined-only"], &exe, &mut names) + linkage_names(&exe, &mut names);
            sources.push(format!("{src} ({compiler}): {n} more"));
        }
    }

    let names: Vec<String> = names
        .into_iter()
        .filter(|n| n.starts_with("_Z") && !legacy_rust(n))
        .collect();
    assert!(names.len() > 1000, "too few names to measure: {sources:?}");

    // c++filt reads names one a line and prints one a line (a name it cannot demangle
    // as it came).
    let mut child = Command::new("c++filt")
        .args(["-i", "-p"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = names.join("\n");
    input.push('\n');
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let theirs: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(theirs.len(), names.len(), "c++filt printed one line a name");

    let mut agree = 0usize;
    let mut left_mangled = vec![];
    let mut differ = vec![];
    for (name, theirs) in names.iter().zip(&theirs) {
        let ours = perfdata_analysis::symbols::elf::demangle(name);
        if &ours == theirs {
            agree += 1;
        } else if &ours == name {
            left_mangled.push(format!("{name}\n    c++filt: {theirs}"));
        } else {
            differ.push(format!(
                "{name}\n    c++filt: {theirs}\n    ours:    {ours}"
            ));
        }
    }
    let share = agree as f64 / names.len() as f64;
    eprintln!(
        "demangle_against_cxxfilt: {} names ({}); agree with `c++filt -i -p`: {agree} ({:.3}%); \
         left mangled where c++filt demangles: {}; printed differently: {}",
        names.len(),
        sources.join("; "),
        share * 100.0,
        left_mangled.len(),
        differ.len()
    );
    for d in differ.iter().take(20) {
        eprintln!("  {d}");
    }
    assert!(
        left_mangled.is_empty(),
        "{} names left mangled that c++filt demangles, e.g.\n{}",
        left_mangled.len(),
        left_mangled
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        share >= 0.999,
        "agreement {:.3}% < 99.9%, e.g.\n{}",
        share * 100.0,
        differ
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
