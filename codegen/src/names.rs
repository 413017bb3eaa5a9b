//! Spec names in the conventions of C and of Rust, shared by the Rust and the Markdown
//! generators (so that neither imports the other).

/// The kernel's name of a record or feature id, without its `PERF_RECORD_` / `HEADER_`
/// prefix: `HeaderAttr` → `HEADER_ATTR`, `Mmap2` → `MMAP2`. Structs, records and features
/// share one namespace in the spec, so a feature whose kernel name is also a record's
/// (AUXTRACE, STAT, COMPRESSED) is declared `XFeature`; its name drops the suffix.
pub fn kernel_id_name(name: &str, is_feature: bool) -> String {
    let name = match is_feature {
        true => name
            .strip_suffix("Feature")
            .filter(|n| !n.is_empty())
            .unwrap_or(name),
        false => name,
    };
    screaming_snake(name)
}

/// `SampleId` → `SAMPLE_ID`.
pub fn screaming_snake(name: &str) -> String {
    words(name)
        .iter()
        .map(|w| w.to_ascii_uppercase())
        .collect::<Vec<_>>()
        .join("_")
}

/// `SampleId` → `sample_id`.
pub fn snake(name: &str) -> String {
    words(name)
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("_")
}

/// The words of a CamelCase or snake_case name (`HTTPServer2` → `HTTP`, `Server2`).
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}
