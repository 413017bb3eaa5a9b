//! The format reference states the sizes and offsets the writer produces: its table comes
//! from the same layout pass as the generated code. (It used to compute its own sizes,
//! which ignored `pad_to` padding and `within` sizes.)

fn markdown(src: &str) -> String {
    let spec = match spec::load_sources("sizes", &[("s.pds".to_string(), src.to_string())]) {
        Ok(s) => s,
        Err(d) => panic!("unexpected diagnostics:\n{d}"),
    };
    codegen::generate_markdown(&spec)
}

/// The table rows of the section of struct `name`.
fn rows<'m>(md: &'m str, name: &str) -> Vec<&'m str> {
    let heading = format!("### {name}");
    let start = md
        .lines()
        .position(|l| l.starts_with(&heading))
        .unwrap_or_else(|| panic!("no section for {name}:\n{md}"));
    md.lines()
        .skip(start + 1)
        .skip_while(|l| !l.starts_with("| offset"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect()
}

#[test]
fn padded_struct_counts_its_padding() {
    let md = markdown(
        "struct Padded pad_to 8 {\n  a: u8\n  b: u16\n}\n\
         struct Holder {\n  p: Padded\n  after: u32\n}\n",
    );
    let rows = rows(&md, "Holder");
    assert!(
        rows[0].starts_with("| 0 | `p` | [`Padded`](#padded) | 8 |"),
        "{rows:?}"
    );
    assert!(
        rows[1].starts_with("| 8 | `after` | `u32` | 4 |"),
        "{rows:?}"
    );
}

#[test]
fn within_field_takes_its_within_size() {
    let md = markdown(
        "struct Point {\n  x: u32\n  y: u16\n}\n\
         struct Holder {\n  p: Point within 16\n  after: u32\n}\n",
    );
    let rows = rows(&md, "Holder");
    assert!(
        rows[0].starts_with("| 0 | `p` | [`Point`](#point) | 16 |"),
        "{rows:?}"
    );
    assert!(
        rows[1].starts_with("| 16 | `after` | `u32` | 4 |"),
        "{rows:?}"
    );
}
