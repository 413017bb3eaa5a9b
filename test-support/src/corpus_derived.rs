//! Inputs made from the external corpus (`../shared/corpus`), which is never copied into
//! the repository: its files are recordings from other people's machines.
//!
//! * [`CorpusRuns`] finds whether bytes hold a run of a corpus file's (64 bytes or more
//!   that are not padding): what the fuzz seed archives may not hold.
//! * [`Recipe`]: a fuzz finding mutated from a corpus file, kept as the edits that make it
//!   from that file (the corpus file's ranges by offset, the bytes it does not have), and
//!   rebuilt where the corpus is present.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The length of the runs looked for: a perf.data record header and a few fields, or a
/// string of a feature section.
pub const RUN: usize = 64;

/// A window is content, not padding or a fill pattern, when it has this many distinct
/// byte values.
const DISTINCT: usize = 16;

fn content(w: &[u8]) -> bool {
    let mut seen = [false; 256];
    let mut n = 0;
    for &b in w {
        if !seen[usize::from(b)] {
            seen[usize::from(b)] = true;
            n += 1;
            if n >= DISTINCT {
                return true;
            }
        }
    }
    false
}

/// The multiplier of the windows' polynomial hash.
const BASE: u64 = 0x0100_0000_01b3;

/// The polynomial hash of a window (`Σ b[i]·BASE^(len-1-i)`, wrapping).
fn hash(w: &[u8]) -> u64 {
    w.iter().fold(0, |h: u64, &b| {
        h.wrapping_mul(BASE).wrapping_add(u64::from(b))
    })
}

/// The hash of every [`RUN`]-byte window of `bytes`, in order, each from the one before
/// (a rolling hash: the archives' inputs are checked byte by byte).
fn window_hashes(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    // BASE^(RUN-1): the weight of the byte leaving the window.
    let top = (1..RUN).fold(1u64, |p, _| p.wrapping_mul(BASE));
    let mut h = bytes.get(..RUN).map_or(0, hash);
    (0..bytes.len().saturating_sub(RUN - 1)).map(move |i| {
        if i > 0 {
            let out = u64::from(bytes[i - 1]).wrapping_mul(top);
            h = h
                .wrapping_sub(out)
                .wrapping_mul(BASE)
                .wrapping_add(u64::from(bytes[i + RUN - 1]));
        }
        h
    })
}

/// Every [`RUN`]-byte window of content of the corpus files, by hash.
pub struct CorpusRuns {
    windows: HashSet<u64>,
}

impl CorpusRuns {
    /// The windows of every file in `dir` (its `MANIFEST.md` aside).
    pub fn of_dir(dir: &Path) -> std::io::Result<CorpusRuns> {
        let mut windows = HashSet::new();
        for e in std::fs::read_dir(dir)? {
            let path = e?.path();
            if !path.is_file() || path.extension().is_some_and(|x| x == "md") {
                continue;
            }
            let bytes = std::fs::read(&path)?;
            windows.extend(
                (bytes.windows(RUN).zip(window_hashes(&bytes)))
                    .filter(|(w, _)| content(w))
                    .map(|(_, h)| h),
            );
        }
        Ok(CorpusRuns { windows })
    }

    /// Leaves out the runs `ours` (a recording of this repository's) has too: text every
    /// machine's perf writes alike, such as the kernel's ftrace format descriptions in a
    /// recording's tracing data.
    pub fn except(mut self, ours: &[u8]) -> CorpusRuns {
        for h in window_hashes(ours) {
            self.windows.remove(&h);
        }
        self
    }

    /// Where `bytes` first hold a [`RUN`]-byte run of content of a corpus file.
    pub fn shared_run(&self, bytes: &[u8]) -> Option<usize> {
        (bytes.windows(RUN).zip(window_hashes(bytes)))
            .position(|(w, h)| self.windows.contains(&h) && content(w))
    }
}

/// How a corpus-derived input is made from its corpus file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `len` bytes of the corpus file from offset `at`.
    Copy { at: usize, len: usize },
    /// Bytes the corpus file does not give.
    Insert(Vec<u8>),
}

/// An input kept as the edits that make it from a corpus file: a committed `.recipe`
/// text holds no run of the corpus's own bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// The corpus file's name.
    pub base: String,
    pub steps: Vec<Step>,
}

impl Recipe {
    /// The recipe of `input` from `base` (named `name`): its runs of [`RUN`] bytes or
    /// more found in `base` are copies, the rest inserted.
    pub fn make(name: &str, base: &[u8], input: &[u8]) -> Recipe {
        let mut at_of: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, w) in base.windows(RUN).enumerate() {
            at_of.entry(hash(w)).or_default().push(i);
        }
        let mut steps = vec![];
        let mut pending = vec![];
        let mut i = 0;
        while i < input.len() {
            let found = input.get(i..i + RUN).and_then(|w| {
                let starts = at_of.get(&hash(w))?;
                // The longest match among the places the window is at (the first few:
                // a window of padding is at thousands).
                starts
                    .iter()
                    .take(64)
                    .map(|&s| {
                        let len = base[s..]
                            .iter()
                            .zip(&input[i..])
                            .take_while(|(a, b)| a == b)
                            .count();
                        (s, len)
                    })
                    .filter(|&(_, len)| len >= RUN)
                    .max_by_key(|&(_, len)| len)
            });
            match found {
                Some((at, len)) => {
                    if !pending.is_empty() {
                        steps.push(Step::Insert(std::mem::take(&mut pending)));
                    }
                    steps.push(Step::Copy { at, len });
                    i += len;
                }
                None => {
                    pending.push(input[i]);
                    i += 1;
                }
            }
        }
        if !pending.is_empty() {
            steps.push(Step::Insert(pending));
        }
        Recipe {
            base: name.to_string(),
            steps,
        }
    }

    /// The input, from its corpus file's bytes.
    pub fn apply(&self, base: &[u8]) -> Result<Vec<u8>, String> {
        let mut out = vec![];
        for s in &self.steps {
            match s {
                Step::Copy { at, len } => out.extend_from_slice(
                    at.checked_add(*len)
                        .and_then(|end| base.get(*at..end))
                        .ok_or_else(|| {
                            format!(
                                "{}: copies {len} bytes at {at}, past its end ({} bytes)",
                                self.base,
                                base.len()
                            )
                        })?,
                ),
                Step::Insert(b) => out.extend_from_slice(b),
            }
        }
        Ok(out)
    }

    /// The text committed: `base NAME`, then a line per step (`copy AT LEN`, `insert
    /// HEX`, 64 bytes a line at most).
    pub fn to_text(&self) -> String {
        let mut t = format!("base {}\n", self.base);
        for s in &self.steps {
            match s {
                Step::Copy { at, len } => t.push_str(&format!("copy {at} {len}\n")),
                Step::Insert(b) => {
                    for chunk in b.chunks(64) {
                        t.push_str("insert ");
                        for x in chunk {
                            t.push_str(&format!("{x:02x}"));
                        }
                        t.push('\n');
                    }
                }
            }
        }
        t
    }

    /// Reads [`Recipe::to_text`]'s text.
    pub fn parse(text: &str) -> Result<Recipe, String> {
        let mut lines = text.lines().enumerate();
        let base = match lines.next() {
            Some((_, l)) => l
                .strip_prefix("base ")
                .ok_or("the first line is not `base NAME`")?,
            None => return Err("empty recipe".into()),
        };
        let mut steps = vec![];
        for (n, line) in lines {
            let bad = || format!("line {}: `{line}` is no step", n + 1);
            let mut words = line.split_whitespace();
            match (words.next(), words.next(), words.next(), words.next()) {
                (Some("copy"), Some(at), Some(len), None) => steps.push(Step::Copy {
                    at: at.parse().map_err(|_| bad())?,
                    len: len.parse().map_err(|_| bad())?,
                }),
                (Some("insert"), Some(hex), None, None) => {
                    let bytes = (0..hex.len())
                        .step_by(2)
                        .map(|i| {
                            hex.get(i..i + 2)
                                .and_then(|h| u8::from_str_radix(h, 16).ok())
                        })
                        .collect::<Option<Vec<u8>>>()
                        .ok_or_else(bad)?;
                    // Lines of one insertion are one step.
                    match steps.last_mut() {
                        Some(Step::Insert(b)) => b.extend(bytes),
                        _ => steps.push(Step::Insert(bytes)),
                    }
                }
                _ => return Err(bad()),
            }
        }
        Ok(Recipe {
            base: base.to_string(),
            steps,
        })
    }

    /// The input a `.recipe` file makes, when the corpus is in `corpus` (`None`: absent).
    pub fn build(recipe: &Path, corpus: Option<&Path>) -> Result<Option<Vec<u8>>, String> {
        let text =
            std::fs::read_to_string(recipe).map_err(|e| format!("{}: {e}", recipe.display()))?;
        let r = Recipe::parse(&text).map_err(|e| format!("{}: {e}", recipe.display()))?;
        let Some(base) = corpus.map(|c| c.join(&r.base)).filter(|p| p.is_file()) else {
            return Ok(None);
        };
        let bytes = std::fs::read(&base).map_err(|e| format!("{}: {e}", base.display()))?;
        r.apply(&bytes).map(Some)
    }
}

/// A committed input (a fuzz finding): the file's bytes, or what its `.recipe` makes from
/// the corpus in `corpus` (`None`: the corpus, or its file, is absent).
pub fn input(path: &Path, corpus: Option<&Path>) -> Result<Option<Vec<u8>>, String> {
    if path.extension().is_some_and(|e| e == "recipe") {
        Recipe::build(path, corpus)
    } else {
        std::fs::read(path)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut rng = crate::XorShift::new(seed);
        (0..n).map(|_| rng.next_u64() as u8).collect()
    }

    #[test]
    fn a_recipe_rebuilds_its_input_and_holds_no_run_of_the_base() {
        let base = noise(5000, 1);
        // Runs of the base out of order, a mutated byte, bytes of its own, a cut.
        let mut input = base[100..900].to_vec();
        input[300] ^= 0xff;
        input.extend(noise(40, 2));
        input.extend_from_slice(&base[4000..4500]);
        input.extend_from_slice(&base[10..70]);
        let r = Recipe::make("b.data", &base, &input);
        assert_eq!(r.apply(&base).unwrap(), input);
        let text = r.to_text();
        assert_eq!(Recipe::parse(&text).unwrap(), r);
        // The inserted bytes are the mutation, the input's own bytes and the short run.
        let inserted: usize = (r.steps.iter())
            .map(|s| match s {
                Step::Insert(b) => b.len(),
                Step::Copy { .. } => 0,
            })
            .sum();
        assert!(inserted <= 1 + 40 + 60 + RUN, "{inserted} bytes inserted");
        assert!(text.len() < input.len(), "{} bytes of text", text.len());
    }

    #[test]
    fn runs_of_content_are_found_and_padding_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let base = [vec![0u8; 500], noise(300, 3)].concat();
        std::fs::write(dir.path().join("c.data"), &base).unwrap();
        std::fs::write(dir.path().join("MANIFEST.md"), noise(300, 4)).unwrap();
        let runs = CorpusRuns::of_dir(dir.path()).unwrap();
        assert_eq!(
            runs.shared_run(&[&[1u8; 9][..], &base[600..680]].concat()),
            Some(9)
        );
        assert_eq!(runs.shared_run(&base[600..600 + RUN - 1]), None);
        assert_eq!(
            runs.shared_run(&vec![0u8; 400]),
            None,
            "zero padding is no content"
        );
        assert_eq!(
            runs.shared_run(&noise(300, 4)),
            None,
            "the manifest is not read"
        );
        let runs = runs.except(&base[650..750]);
        assert_eq!(
            runs.shared_run(&base[660..740]),
            None,
            "runs of ours too are left out"
        );
        assert_eq!(runs.shared_run(&base[700..780]), Some(0));
    }

    #[test]
    fn the_rolling_hash_is_each_window_s_own() {
        let bytes = noise(300, 5);
        let rolled: Vec<u64> = window_hashes(&bytes).collect();
        let direct: Vec<u64> = bytes.windows(RUN).map(hash).collect();
        assert_eq!(rolled, direct);
        assert_eq!(window_hashes(&bytes[..RUN - 1]).count(), 0);
    }

    #[test]
    fn an_input_is_a_file_or_what_its_recipe_makes() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus");
        std::fs::create_dir(&corpus).unwrap();
        let base = noise(200, 6);
        std::fs::write(corpus.join("c.data"), &base).unwrap();
        let wanted = [&base[10..150], &b"mut"[..]].concat();
        let recipe = dir.path().join("f.recipe");
        std::fs::write(&recipe, Recipe::make("c.data", &base, &wanted).to_text()).unwrap();
        let plain = dir.path().join("g");
        std::fs::write(&plain, b"bytes").unwrap();
        assert_eq!(input(&recipe, Some(&corpus)).unwrap(), Some(wanted));
        assert_eq!(input(&recipe, None).unwrap(), None, "no corpus: not made");
        assert_eq!(input(&plain, None).unwrap(), Some(b"bytes".to_vec()));
        assert!(input(&dir.path().join("absent"), None).is_err());
    }

    #[test]
    fn a_recipe_that_copies_past_its_base_is_an_error() {
        let r = Recipe::parse("base x\ncopy 10 20\n").unwrap();
        let e = r.apply(&[0u8; 25]).unwrap_err();
        assert!(e.contains("past its end"), "{e}");
        assert!(Recipe::parse("base x\ncopy ten 20\n").is_err());
        assert!(Recipe::parse("copy 1 2\n").is_err());
    }
}
