//! The layout pass: sizes, flatness, borrowing and minimum sizes of structs.

use spec::ir::{Spec, TypeRef};
use spec::layout::Layout;

const SRC: &str = r#"
context {
  /// bytes per `word` (4 or 8)
  word_size: u8
  nr: u32
}

/// Flat: arrays of it are borrowed bytes.
struct Point {
  x: u32
  y: u16
}

/// Flat, made of a flat struct.
struct Segment {
  from: Point
  to: Point
}

/// Fixed, but not flat: the writer pads it.
struct Padded pad_to 8 {
  a: u8
  b: u16
}

/// Fixed: its parts are, padding included.
struct HoldsPadded {
  p: Padded
  after: u32
}

/// Fixed: a `within` field takes its `within` size, not its type's.
struct HoldsWithin {
  p: Point within 16
  after: u32
}

/// Not fixed: the size of a word is known at run time.
struct Words {
  literal: word[8]
  sized: word[ctx.word_size]
}

/// Not fixed: a count and a condition.
struct Counted {
  n: u32 = count(points)
  points: [Point; n]
  extra: u64 if n > 2
}

/// Reaches itself through an array: no fixed size, and the pass terminates.
struct Tree {
  n: u32 = count(kids)
  kids: [Tree; n]
}

/// Fixed arrays of fixed elements.
struct Arrays {
  points: [Point; 3]
  raw: bytes[5]
  text: str[7]
}

/// Owns everything it holds.
struct Owned {
  a: u64
  words: [word[ctx.word_size]; 2]
}

struct Trailer {
  time: u64
  cpus: [u16; ctx.nr]
}

record Rec = 1 trailer Trailer {
  pid: u32
}
"#;

fn spec() -> Spec {
    match spec::load_sources("layout", &[("l.pds".to_string(), SRC.to_string())]) {
        Ok(s) => s,
        Err(d) => panic!("unexpected diagnostics:\n{d}"),
    }
}

fn struct_ty(name: &str) -> TypeRef {
    TypeRef::Struct {
        name: name.to_string(),
        args: vec![],
    }
}

#[test]
fn fixed_sizes_count_padding_and_within() {
    let spec = spec();
    let layout = Layout::of(&spec);
    let size = |n: &str| layout.of_struct(n).fixed_size;
    assert_eq!(size("Point"), Some(6));
    assert_eq!(size("Segment"), Some(12));
    // 3 bytes of fields, written as 8.
    assert_eq!(size("Padded"), Some(8));
    assert_eq!(size("HoldsPadded"), Some(12));
    assert_eq!(size("HoldsWithin"), Some(20));
    assert_eq!(size("Arrays"), Some(3 * 6 + 5 + 7));
    assert_eq!(size("Words"), None);
    assert_eq!(size("Counted"), None);
    assert_eq!(size("Tree"), None);
    assert_eq!(size("Owned"), None);
    // Records are bounded by their container.
    assert_eq!(size("Rec"), None);
    assert_eq!(layout.fixed_size(&struct_ty("Padded")), Some(8));
    let words = spec.find_struct("Words").unwrap();
    assert_eq!(layout.field_fixed_size(&words.fields[0]), Some(8));
    assert_eq!(layout.field_fixed_size(&words.fields[1]), None);
    let counted = spec.find_struct("Counted").unwrap();
    assert_eq!(
        layout.field_fixed_size(&counted.fields[2]),
        None,
        "conditional"
    );
}

#[test]
fn flat_structs_are_fixed_and_unpadded() {
    let spec = spec();
    let layout = Layout::of(&spec);
    let flat: Vec<&str> = spec
        .structs
        .iter()
        .filter(|s| layout.of_struct(&s.name).flat)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(flat, ["Point", "Segment"]);
    assert_eq!(layout.flat_size(&struct_ty("Segment")), Some(12));
    assert_eq!(layout.flat_size(&struct_ty("Padded")), None);
    for s in &spec.structs {
        if layout.of_struct(&s.name).flat {
            assert!(layout.of_struct(&s.name).fixed_size.is_some(), "{}", s.name);
        }
    }
}

#[test]
fn borrowing_follows_arrays_of_flat_elements() {
    let spec = spec();
    let layout = Layout::of(&spec);
    let borrows = |n: &str| layout.of_struct(n).borrows;
    assert!(!borrows("Point"));
    assert!(!borrows("Padded"));
    assert!(
        borrows("Counted"),
        "an array of flat structs is borrowed bytes"
    );
    assert!(borrows("Arrays"));
    assert!(!borrows("Tree"), "an array of non-flat structs is a Vec");
    assert!(!borrows("Owned"), "words are not flat");
    assert!(borrows("Rec"), "records are bounded: they keep a tail");
}

#[test]
fn minimum_sizes_and_trailers() {
    let spec = spec();
    let layout = Layout::of(&spec);
    let min = |n: &str| layout.of_struct(n).min_size;
    assert_eq!(min("Point"), 6);
    assert_eq!(min("Counted"), 4, "no points, no extra");
    assert_eq!(min("Words"), 8 + 4);
    assert_eq!(min("Tree"), 4);
    assert_eq!(min("Owned"), 8 + 2 * 4);
    assert_eq!(layout.min_size(&struct_ty("Segment")), 12);
    for s in &spec.structs {
        let l = layout.of_struct(&s.name);
        if let Some(size) = l.fixed_size {
            assert!(
                l.min_size <= size,
                "{}: min {} > fixed {size}",
                s.name,
                l.min_size
            );
        }
    }
    let trailers: Vec<&str> = spec
        .structs
        .iter()
        .filter(|s| layout.of_struct(&s.name).is_trailer)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(trailers, ["Trailer"]);
}

#[test]
fn expressions_and_types_display_as_spec_text() {
    let spec = spec();
    let counted = spec.find_struct("Counted").unwrap();
    assert_eq!(counted.fields[1].ty.to_string(), "[Point; n]");
    assert_eq!(
        counted.fields[2].cond.as_ref().unwrap().to_string(),
        "n > 2"
    );
    let words = spec.find_struct("Words").unwrap();
    assert_eq!(words.fields[1].ty.to_string(), "word[ctx.word_size]");
    let arrays = spec.find_struct("Arrays").unwrap();
    assert_eq!(arrays.fields[2].ty.to_string(), "str[7]");
}
