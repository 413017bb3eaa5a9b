//! `cargo xtask fuzz`: seeds the corpora and runs the cargo-fuzz targets of `fuzz/`.
//!
//! cargo-fuzz needs nightly flags (`-Zsanitizer`): the nightly toolchain when rustup has
//! one, else the stable one with `RUSTC_BOOTSTRAP=1`; a clear error when neither works
//! or cargo-fuzz is not installed. Seeds are copied at run time into `fuzz/corpus/`
//! (ignored by git): the committed minimised corpus of the target (`fuzz/seeds/T.tar.gz`,
//! what the last campaigns found, so that a campaign starts where they stopped), the
//! conformance fixtures, `../shared/corpus` when present, the spec files, and the
//! committed `fuzz/regressions/`. `--minimize` writes those archives.

use anyhow::{bail, Context, Result};
use perfdata_test_support::corpus_derived::{self, CorpusRuns, Recipe, Step};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Every target (`fuzz/fuzz_targets/<name>.rs`).
pub const TARGETS: &[&str] = &[
    "read_file",
    "read_stream",
    "reencode",
    "convert",
    "structured",
    "spec_language",
    "unwind",
    "viewers",
    "python",
    "jitdump",
    "analyses",
    "disasm",
];

pub struct Options {
    pub targets: Vec<String>,
    pub seconds: u64,
    /// libFuzzer's `-max_len`; `None`: the target's default ([`default_max_len`]).
    pub max_len: Option<usize>,
    /// Without AddressSanitizer (`cargo fuzz run -s none`): several times the
    /// executions per second, for long campaigns; the sanitizer build for short ones.
    pub throughput: bool,
    /// Instead of fuzzing: minimise each target's corpus into `fuzz/seeds/T.tar.gz`.
    pub minimize: bool,
    /// Instead of fuzzing: take out of each target's `fuzz/seeds/T.tar.gz` the inputs
    /// that hold a run of the external corpus's bytes.
    pub scrub: bool,
    /// Instead of fuzzing: keep these findings as recipes from the corpus file they were
    /// mutated from (`FILE.recipe`: the edits that make it from that file).
    pub as_recipe: Vec<PathBuf>,
}

/// What the committed minimised corpora (`fuzz/seeds/*.tar.gz`) may weigh in all.
pub const SEEDS_BUDGET: u64 = 6 << 20;

/// The largest input a target is given by default: enough for a header, attrs, a
/// few features and records (the structures the format has), not the size of the
/// largest fixture — the work per input grows with its size.
pub fn default_max_len(target: &str) -> usize {
    match target {
        "spec_language" => 8 << 10,
        // A header and a few dozen records: a jitdump has no structure larger.
        "jitdump" => 4 << 10,
        // A replay by the analyses costs per sample: a few dozen records are enough.
        "viewers" | "python" | "analyses" => 16 << 10,
        // One function's code: a few hundred instructions.
        "disasm" => 4 << 10,
        _ => 64 << 10,
    }
}

impl Options {
    pub fn parse(args: &[&str]) -> Result<Self> {
        let mut opts = Options {
            targets: vec![],
            seconds: 60,
            max_len: None,
            throughput: false,
            minimize: false,
            scrub: false,
            as_recipe: vec![],
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match *a {
                "--target" => {
                    let t = it.next().context("--target T")?;
                    if !TARGETS.contains(t) {
                        bail!(
                            "unknown fuzz target {t:?}; the targets: {}",
                            TARGETS.join(", ")
                        );
                    }
                    opts.targets.push(t.to_string());
                }
                "--seconds" => {
                    opts.seconds = it
                        .next()
                        .context("--seconds N")?
                        .parse()
                        .context("--seconds N: a number")?
                }
                "--max-len" => {
                    opts.max_len = Some(
                        it.next()
                            .context("--max-len BYTES")?
                            .parse()
                            .context("--max-len BYTES: a number")?,
                    )
                }
                "--throughput" => opts.throughput = true,
                "--minimize" => opts.minimize = true,
                "--scrub" => opts.scrub = true,
                "--as-recipe" => opts
                    .as_recipe
                    .push(PathBuf::from(it.next().context("--as-recipe FILE")?)),
                other => bail!("fuzz: unknown argument {other:?}"),
            }
        }
        if opts.targets.is_empty() {
            opts.targets = TARGETS.iter().map(|t| t.to_string()).collect();
        }
        Ok(opts)
    }
}

/// How cargo-fuzz gets its nightly flags.
enum Toolchain {
    Nightly,
    StableBootstrap,
}

fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn toolchain() -> Result<Toolchain> {
    if succeeds(Command::new("rustup").args(["run", "nightly", "rustc", "--version"])) {
        return Ok(Toolchain::Nightly);
    }
    if succeeds(Command::new("rustc").env("RUSTC_BOOTSTRAP", "1").args([
        "-Z",
        "unstable-options",
        "--version",
    ])) {
        return Ok(Toolchain::StableBootstrap);
    }
    bail!(
        "fuzzing needs nightly compiler flags: install a nightly toolchain (`rustup toolchain install nightly`), or a rustc that accepts RUSTC_BOOTSTRAP=1"
    )
}

fn cargo_fuzz(tc: &Toolchain) -> Command {
    let mut cmd = Command::new("cargo");
    match tc {
        Toolchain::Nightly => {
            cmd.arg("+nightly");
        }
        Toolchain::StableBootstrap => {
            cmd.env("RUSTC_BOOTSTRAP", "1");
        }
    }
    cmd.arg("fuzz");
    cmd
}

/// Where the fuzz build goes: `$FUZZ_TARGET_DIR`, else `fuzz` under the usual target dir.
fn target_dir(root: &Path) -> PathBuf {
    if let Some(d) = std::env::var_os("FUZZ_TARGET_DIR") {
        return d.into();
    }
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("fuzz")
}

pub fn run(root: &Path, opts: &Options) -> Result<()> {
    // The corpus checks need no fuzzer.
    if opts.scrub {
        return scrub(root, &opts.targets);
    }
    if !opts.as_recipe.is_empty() {
        return opts.as_recipe.iter().try_for_each(|f| as_recipe(root, f));
    }
    let tc = toolchain()?;
    if !succeeds(cargo_fuzz(&tc).arg("--version")) {
        bail!("cargo-fuzz is not installed: `cargo install cargo-fuzz`");
    }
    if opts.minimize {
        return minimize(root, &tc, opts);
    }
    println!(
        "toolchain: {}",
        match tc {
            Toolchain::Nightly => "nightly",
            Toolchain::StableBootstrap => "stable with RUSTC_BOOTSTRAP=1",
        }
    );
    let fuzz = root.join("fuzz");
    let target_dir = target_dir(root);
    let mut summary = vec![];
    for t in &opts.targets {
        let corpus = fuzz.join("corpus").join(t);
        let seeded = seed(root, t, &corpus)?;
        let max_len = opts.max_len.unwrap_or_else(|| default_max_len(t));
        println!(
            "== {t}: {seeded} seed(s), {} s, inputs up to {max_len} bytes, {}",
            opts.seconds,
            if opts.throughput {
                "no sanitizer"
            } else {
                "AddressSanitizer"
            }
        );
        let mut cmd = cargo_fuzz(&tc);
        cmd.current_dir(&fuzz)
            // The targets' libFuzzer entry points are behind this feature, so that
            // `cargo test --workspace` never builds libFuzzer.
            .args(["run", "-O", "--features", "libfuzzer"]);
        if opts.throughput {
            // Its own target directory: the two builds do not rebuild each other.
            cmd.args(["-s", "none", "--target-dir"])
                .arg(target_dir.join("fuzz-throughput"));
        } else {
            cmd.arg("--target-dir").arg(&target_dir);
        }
        let out = cmd
            .arg(t)
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={}", opts.seconds))
            .arg(format!("-dict={}", fuzz.join("perfdata.dict").display()))
            .arg(format!("-max_len={max_len}"))
            .arg("-rss_limit_mb=1024")
            .arg("-timeout=10")
            .arg("-print_final_stats=1")
            .stdout(Stdio::inherit())
            .stderr(Stdio::piped())
            .output()
            .with_context(|| format!("running cargo fuzz for {t}"))?;
        let log = String::from_utf8_lossy(&out.stderr);
        let line = stats(t, &log);
        if !out.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            for l in tail.iter().rev() {
                eprintln!("{l}");
            }
            bail!("fuzz target {t} failed (see fuzz/artifacts/{t}/): {line}");
        }
        println!("{line}");
        summary.push(line);
    }
    println!("\nsummary:");
    for l in summary {
        println!("  {l}");
    }
    Ok(())
}

/// The committed minimised corpus of target `t`.
fn seeds_archive(root: &Path, t: &str) -> PathBuf {
    root.join("fuzz/seeds").join(format!("{t}.tar.gz"))
}

/// `dir`'s files as a sorted, dateless tar.gz at `archive` (the same inputs give the
/// same bytes).
fn write_archive(dir: &Path, archive: &Path) -> Result<()> {
    let tar = Command::new("sh")
        .arg("-c")
        .arg(
            "tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - -C \"$1\" . | gzip -9n > \"$2\"",
        )
        .arg("sh")
        .arg(dir)
        .arg(archive)
        .status()?;
    if !tar.success() {
        bail!("writing {}", archive.display());
    }
    Ok(())
}

/// The runs of the external corpus's bytes that no recording of this repository has
/// (`None` without `../shared/corpus`): what nothing committed may hold.
pub fn corpus_runs(root: &Path) -> Result<Option<CorpusRuns>> {
    let corpus = root.join("../shared/corpus");
    if !corpus.is_dir() {
        return Ok(None);
    }
    let mut runs = CorpusRuns::of_dir(&corpus).context("reading ../shared/corpus")?;
    for f in files_in(&root.join("conformance/fixtures"))
        .into_iter()
        .chain(files_in(&root.join("samples")))
    {
        runs = runs.except(&std::fs::read(&f)?);
    }
    Ok(Some(runs))
}

/// Removes the files of `dir` that hold one of `runs`; how many. Without the corpus
/// (`None`), says that nothing was checked.
fn drop_corpus_runs(runs: Option<&CorpusRuns>, dir: &Path) -> Result<usize> {
    let Some(runs) = runs else {
        println!(
            "../shared/corpus is absent: {} is not checked for its bytes",
            dir.display()
        );
        return Ok(0);
    };
    let mut dropped = 0;
    for f in files_in(dir) {
        if runs.shared_run(&std::fs::read(&f)?).is_some() {
            std::fs::remove_file(&f)?;
            dropped += 1;
        }
    }
    Ok(dropped)
}

/// `--scrub`: each target's committed archive rewritten without the inputs that hold a
/// run of the external corpus's bytes (libFuzzer's descendants of a corpus file keep
/// most of it). The corpus files stay seeds at run time; they are not committed.
fn scrub(root: &Path, targets: &[String]) -> Result<()> {
    let Some(runs) = corpus_runs(root)? else {
        bail!("--scrub compares the archives with ../shared/corpus, which is absent");
    };
    let scratch = root.join("fuzz/corpus/.scrub");
    for t in targets {
        let archive = seeds_archive(root, t);
        if !archive.is_file() {
            continue;
        }
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch)?;
        let unpacked = Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&scratch)
            .status()?;
        if !unpacked.success() {
            bail!("unpacking {}", archive.display());
        }
        let before = files_in(&scratch).len();
        let dropped = drop_corpus_runs(Some(&runs), &scratch)?;
        if dropped > 0 {
            write_archive(&scratch, &archive)?;
        }
        println!(
            "{t}: {dropped} of {before} input(s) left out, {} bytes now",
            std::fs::metadata(&archive)?.len()
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// `--as-recipe FILE`: a finding mutated from a corpus file, replaced by `FILE.recipe`,
/// the edits that make it from the corpus file it shares the most with (rebuilt and
/// compared before `FILE` is removed).
fn as_recipe(root: &Path, file: &Path) -> Result<()> {
    let input = std::fs::read(file).with_context(|| file.display().to_string())?;
    let corpus = root.join("../shared/corpus");
    // The recipe from the corpus file that gives the most bytes.
    let mut best: Option<(usize, Recipe, Vec<u8>)> = None;
    for c in files_in(&corpus) {
        let base = std::fs::read(&c)?;
        let name = c
            .file_name()
            .context("a corpus file's name")?
            .to_string_lossy()
            .into_owned();
        let recipe = Recipe::make(&name, &base, &input);
        let copied = (recipe.steps.iter())
            .map(|s| match s {
                Step::Copy { len, .. } => *len,
                Step::Insert(_) => 0,
            })
            .sum::<usize>();
        if best.as_ref().is_none_or(|(n, _, _)| copied > *n) {
            best = Some((copied, recipe, base));
        }
    }
    let Some((copied, recipe, base)) = best.filter(|(n, _, _)| *n > 0) else {
        bail!("{}: no run of ../shared/corpus in it", file.display());
    };
    let name = &recipe.base;
    if recipe.apply(&base).ok().as_deref() != Some(&input[..]) {
        bail!("{}: its recipe does not rebuild it", file.display());
    }
    let text = recipe.to_text();
    if let Some(at) = corpus_runs(root)?.and_then(|r| r.shared_run(text.as_bytes())) {
        bail!(
            "{}: its recipe holds the corpus's bytes at {at}",
            file.display()
        );
    }
    let out = PathBuf::from(format!("{}.recipe", file.display()));
    std::fs::write(&out, text)?;
    std::fs::remove_file(file)?;
    println!(
        "{}: {copied} of {} bytes from {name}; {} bytes of recipe",
        out.display(),
        input.len(),
        std::fs::metadata(&out)?.len()
    );
    Ok(())
}

/// The committed findings of target `t` (`fuzz/regressions/T/`): the files, and the
/// inputs their recipes make when the corpus is present (a note for each one that
/// cannot be made).
pub fn regressions(root: &Path, t: &str) -> Result<Vec<Vec<u8>>> {
    let dir = root.join("fuzz/regressions").join(t);
    let corpus = root.join("../shared/corpus");
    let corpus = corpus.is_dir().then_some(corpus.as_path());
    let mut out = vec![];
    for f in files_in(&dir) {
        match corpus_derived::input(&f, corpus).map_err(anyhow::Error::msg)? {
            Some(bytes) => out.push(bytes),
            None => println!(
                "{}: not made (its corpus file is absent)",
                f.strip_prefix(root).unwrap_or(&f).display()
            ),
        }
    }
    Ok(out)
}

/// `--minimize`: each target's corpus (seeded as for a run, so the archive's inputs are
/// kept unless others cover the same) cut by libFuzzer's merge to the fewest inputs that
/// reach every edge it reaches (`-use_counters=0`: edges, not hit counts, else nearly
/// every input counts), each at most the target's `-max_len`, then written as
/// `fuzz/seeds/T.tar.gz` (sorted, no dates: the same inputs give the same bytes). Fails
/// when the archives together exceed [`SEEDS_BUDGET`].
fn minimize(root: &Path, tc: &Toolchain, opts: &Options) -> Result<()> {
    let fuzz = root.join("fuzz");
    let builds = target_dir(root).join("fuzz-throughput");
    std::fs::create_dir_all(fuzz.join("seeds"))?;
    let runs = corpus_runs(root)?;
    for t in &opts.targets {
        let corpus = fuzz.join("corpus").join(t);
        seed(root, t, &corpus)?;
        let built = cargo_fuzz(tc)
            .current_dir(&fuzz)
            .args(["build", "-O", "--features", "libfuzzer", "-s", "none"])
            .arg("--target-dir")
            .arg(&builds)
            .arg(t)
            .status()?;
        if !built.success() {
            bail!("building fuzz target {t} failed");
        }
        let bin = std::fs::read_dir(&builds)?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("release").join(t))
            .find(|p| p.is_file())
            .with_context(|| format!("the {t} binary under {}", builds.display()))?;
        let merged = fuzz.join("corpus").join(format!(".{t}.minimised"));
        let _ = std::fs::remove_dir_all(&merged);
        std::fs::create_dir_all(&merged)?;
        let max_len = opts.max_len.unwrap_or_else(|| default_max_len(t));
        let out = Command::new(&bin)
            .arg("-merge=1")
            .arg("-use_counters=0")
            .arg(format!("-max_len={max_len}"))
            .arg(&merged)
            .arg(&corpus)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()?;
        let log = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            bail!("merging the {t} corpus failed:\n{log}");
        }
        let archive = seeds_archive(root, t);
        let dropped = drop_corpus_runs(runs.as_ref(), &merged)?;
        if dropped > 0 {
            println!("{t}: {dropped} input(s) left out, holding bytes of ../shared/corpus");
        }
        write_archive(&merged, &archive)?;
        let files = files_in(&merged);
        let bytes: u64 = files
            .iter()
            .map(|f| f.metadata().map_or(0, |m| m.len()))
            .sum();
        std::fs::remove_dir_all(&merged)?;
        let edges = log
            .lines()
            .rev()
            .find(|l| l.contains("MERGE-OUTER:") && l.contains("coverage edges"))
            .unwrap_or("")
            .to_string();
        println!(
            "{t}: {} inputs, {bytes} bytes, {} as {} ({edges})",
            files.len(),
            std::fs::metadata(&archive)?.len(),
            archive.display()
        );
    }
    let total: u64 = TARGETS
        .iter()
        .filter_map(|t| std::fs::metadata(seeds_archive(root, t)).ok())
        .map(|m| m.len())
        .sum();
    println!("fuzz/seeds/: {total} bytes in all (budget {SEEDS_BUDGET})");
    if total > SEEDS_BUDGET {
        bail!("fuzz/seeds/ is {total} bytes, over its budget of {SEEDS_BUDGET}: minimise with a smaller --max-len");
    }
    Ok(())
}

/// Files of `dir` that can be seeds (not notes or archives), sorted.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file() && p.extension().is_none_or(|e| e != "md" && e != "gz"));
    v.sort();
    v
}

/// "target: N execs (M/s), cov C, ft F, corpus K" from libFuzzer's final output.
fn stats(t: &str, log: &str) -> String {
    let stat = |name: &str| {
        log.lines()
            .find_map(|l| l.strip_prefix(&format!("stat::{name}:")))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| "?".into())
    };
    // The last status line: "#123 DONE cov: 456 ft: 789 corp: 12/34Kb ..."
    let last = log
        .lines()
        .rev()
        .find(|l| l.starts_with('#') && l.contains("cov:"))
        .unwrap_or("");
    let field = |key: &str| {
        last.split_whitespace()
            .skip_while(|w| *w != key)
            .nth(1)
            .unwrap_or("?")
            .to_string()
    };
    format!(
        "{t}: {} execs ({}/s), cov {}, ft {}, corpus {}",
        stat("number_of_executed_units"),
        stat("average_exec_per_sec"),
        field("cov:"),
        field("ft:"),
        field("corp:"),
    )
}

/// Copies the seeds of target `t` into `corpus` (named by content, so reruns add
/// nothing twice); returns how many seeds there are.
fn seed(root: &Path, t: &str, corpus: &Path) -> Result<usize> {
    std::fs::create_dir_all(corpus)?;
    let archive = seeds_archive(root, t);
    let mut from_archive = 0;
    if archive.is_file() {
        // Named by content (libFuzzer's names): unpacking again adds nothing twice.
        let unpacked = Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(corpus)
            .status()
            .context("tar, to unpack the committed seeds")?;
        if !unpacked.success() {
            bail!("unpacking {}", archive.display());
        }
        let listed = Command::new("tar").arg("-tzf").arg(&archive).output()?;
        from_archive = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .filter(|l| !l.ends_with('/'))
            .count();
    }
    let mut seeds: Vec<Vec<u8>> = vec![];
    let data_files: Vec<PathBuf> = files_in(&root.join("conformance/fixtures"))
        .into_iter()
        .chain(files_in(&root.join("../shared/corpus")))
        .collect();
    match t {
        "spec_language" => {
            for f in files_in(&root.join("spec/perf_data")) {
                let text = std::fs::read(&f)?;
                seeds.push([&[0u8][..], &text].concat());
                seeds.push([&[1u8][..], &text].concat());
            }
        }
        // Bytes for `arbitrary`: no file is a meaningful seed.
        "structured" | "unwind" => {}
        "read_stream" => {
            for f in &data_files {
                let bytes = std::fs::read(f)?;
                seeds.push([&[0u8][..], &bytes].concat());
                seeds.push([&[2u8, 7, 64][..], &bytes].concat());
            }
        }
        // No perf.data file is a jitdump: its committed archive holds the seeds.
        "jitdump" => {}
        // Code: a control byte (architecture, syntax, address given), then bytes.
        "disasm" => seeds.extend(disasm_seeds()),
        // A control byte (batch size, how many column bytes), the columns, the file.
        "python" => {
            for f in &data_files {
                let bytes = std::fs::read(f)?;
                seeds.push([&[0u8][..], &bytes].concat());
                seeds.push([&[(5 << 3) | 3, 8, 20, 0][..], &bytes].concat());
            }
        }
        _ => {
            for f in &data_files {
                seeds.push(std::fs::read(f)?);
            }
        }
    }
    seeds.extend(regressions(root, t)?);
    for s in &seeds {
        let name = format!("seed-{:016x}", fnv1a(s));
        let path = corpus.join(name);
        if !path.exists() {
            std::fs::write(path, s)?;
        }
    }
    Ok(from_archive + seeds.len())
}

/// The `disasm` target's seeds: a few functions' code for each architecture and syntax
/// (calls, jumps, RIP-relative operands, NOP padding, an undecodable byte, a cut
/// instruction), at a usual address and at the top of the address space.
fn disasm_seeds() -> Vec<Vec<u8>> {
    const X86_64: &[u8] = &[
        0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0x89, 0x7d, 0xfc, 0x8b, 0x45, 0xfc, 0x0f,
        0xaf, 0xc0, 0xd1, 0xe0, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x48, 0x8d, 0x05, 0xf9, 0xff, 0xff,
        0xff, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0xeb, 0xe0, 0x06, 0x0f,
        0x0b, 0xc9, 0xc3, 0x48, 0x8b,
    ];
    const I386: &[u8] = &[
        0x55, 0x89, 0xe5, 0x83, 0xec, 0x08, 0x8b, 0x45, 0x08, 0xe8, 0xfc, 0xff, 0xff, 0xff, 0x74,
        0xf0, 0x0f, 0xff, 0xc9, 0xc3, 0x8b,
    ];
    const AARCH64: &[u8] = &[
        0xfd, 0x7b, 0xbf, 0xa9, 0xfd, 0x03, 0x00, 0x91, 0x00, 0x00, 0x80, 0x52, 0x02, 0x00, 0x00,
        0x94, 0xe0, 0xff, 0xff, 0x54, 0xfd, 0x7b, 0xc1, 0xa8, 0xc0, 0x03, 0x5f, 0xd6, 0x00, 0x00,
        0x00, 0x00, 0x1f, 0x20,
    ];
    let top = 0xffff_ffff_ffff_fff0u64.to_le_bytes();
    let mut seeds = vec![];
    for (arch, code) in [(0u8, X86_64), (1, I386), (2, AARCH64)] {
        for syntax in [0u8, 4] {
            seeds.push([&[arch | syntax][..], code].concat());
            seeds.push([&[arch | syntax | 8][..], &top, code].concat());
        }
    }
    seeds
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
