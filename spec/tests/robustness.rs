//! The parser and validator never panic or hang, whatever the input.

use std::panic;

const VALID: &str = r#"
/// Doc.
const MAGIC: u64 = 0x32454c4946524550
enum Ctx: u64 { HV = -32, KERNEL = -128 }
flags SampleType: u64 { IP = 0, TID = 1, TIME = 2, REGS = 12 }
flags Misc: u16 { CPUMODE = 0..2, EXACT = 14 }
bitfield AttrFlags: u64 { disabled: 1, inherit: 1, precise_ip: 2, reserved: 60 }
context {
  sample_type: SampleType
  sample_id_all: bool
  nr: u32
}
struct Regs(mask: u64) { abi: u64, regs: [u64; popcount(mask)] if abi != 0 }
struct SampleId { pid: u32 if ctx.sample_type has TID, time: u64 if ctx.sample_type has TIME }
struct Attr bounded_by max(size, 64) {
  type: u32
  size: u32 = sizeof(self)
  attr_flags: AttrFlags
  extra: u64 if remaining >= 8
}
record Mmap = 1 trailer SampleId if ctx.sample_id_all pad_to 8 {
  misc: Misc
  nr: u32 = count(ids)
  ids: [u64; nr]
  name_len: u16 = len(name)
  name: str[name_len]
  file: cstr
  kind: u32
  body: switch kind as Body { 1 => One: u32, -1 => Neg: [u8; ..], _ => Other: bytes[..] }
  regs: Regs(ctx.sample_type) if ctx.sample_type has REGS && (kind & 3) == 1 || !(kind > 2)
  raw: bytes[align(kind, 8) - min(kind, 4) * 2 / 1] within kind + 0
  feat: feature(kind)
  payload data: bytes[kind]
}
feature Hostname = 3 { value: Attr }
"#;

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ":",
    ",",
    "..",
    "=>",
    "=",
    "-",
    "0x",
    "99999999999999999999999",
    "switch",
    "if",
    "within",
    "payload",
    "struct",
    "record X = 1",
    "///",
    "//",
    "\n",
    "é",
    "\u{0}",
    "ctx.",
    "has",
    "sizeof(self)",
    "len(",
    "count(",
    "_",
    "true",
    "&&",
    "||",
    "!",
    "<",
    "remaining",
    "bytes[..]",
    "[u8; ..]",
    "Attr",
    "Regs(",
    "\t",
    "💥",
];

/// A small deterministic pseudo-random generator (no dependency needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn check(text: &str) {
    let sources = vec![("fuzz.pds".to_string(), text.to_string())];
    let result = panic::catch_unwind(|| {
        if let Err(d) = spec::load_sources("fuzz", &sources) {
            assert!(!d.is_empty());
            let _ = d.to_string();
        }
    });
    if result.is_err() {
        panic!("panicked on input:\n{text}");
    }
}

#[test]
fn the_base_spec_is_valid() {
    let sources = vec![("valid.pds".to_string(), VALID.to_string())];
    if let Err(d) = spec::load_sources("valid", &sources) {
        panic!("{d}");
    }
}

#[test]
fn truncations_never_panic() {
    let chars: Vec<char> = VALID.chars().collect();
    for end in (0..chars.len()).step_by(7) {
        check(&chars[..end].iter().collect::<String>());
    }
}

#[test]
fn random_mutations_never_panic() {
    let mut rng = Lcg(0x5eed);
    for _ in 0..600 {
        let mut chars: Vec<char> = VALID.chars().collect();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(chars.len());
            match rng.below(4) {
                0 => {
                    let len = rng.below(12).min(chars.len() - at);
                    chars.drain(at..at + len);
                }
                1 => {
                    let token = TOKENS[rng.below(TOKENS.len())];
                    chars.splice(at..at, token.chars());
                }
                2 => {
                    let len = rng.below(30).min(chars.len() - at);
                    let copy: Vec<char> = chars[at..at + len].to_vec();
                    let to = rng.below(chars.len());
                    chars.splice(to..to, copy);
                }
                _ => chars[at] = char::from(b' ' + rng.below(95) as u8),
            }
        }
        check(&chars.into_iter().collect::<String>());
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let depth = 10_000;
    let parens = format!(
        "struct A {{ a: u32, b: u32 if {}a > 0{} }}",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    check(&parens);
    check(&format!(
        "struct A {{ a: u32 if {}true }}",
        "!".repeat(depth)
    ));
    check(&format!(
        "struct A {{ a: {}u8{} }}",
        "[".repeat(depth),
        "; 1]".repeat(depth)
    ));
    let switches = "switch 1 { 1 => A: ".repeat(depth);
    check(&format!("struct A {{ a: {switches}"));
    // Unclosed blocks, each followed by an item keyword: the parser looks ahead for an item
    // at each one to word its error.
    check(&"struct A { a: u32\n".repeat(depth));
    check(&"enum E: u8 { flags ".repeat(depth));
}

#[test]
fn garbage_never_panics() {
    let mut rng = Lcg(42);
    for _ in 0..200 {
        let len = rng.below(200);
        let text: String = (0..len)
            .map(|_| TOKENS[rng.below(TOKENS.len())])
            .collect::<Vec<_>>()
            .join(if rng.below(2) == 0 { " " } else { "" });
        check(&text);
    }
    check("");
    check("   // only a comment");
    check("/// a dangling doc comment");
}
