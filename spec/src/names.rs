//! Spec names in the case conventions of C and Rust (`SampleId` → `SAMPLE_ID`,
//! `sample_id`): the generators name items with them, and validation needs them to find
//! the members whose generated names would clash.

/// `SampleId` → `SAMPLE_ID`.
pub fn screaming_snake(name: &str) -> String {
    joined(name, str::to_ascii_uppercase)
}

/// `SampleId` → `sample_id`.
pub fn snake(name: &str) -> String {
    joined(name, str::to_ascii_lowercase)
}

/// The words of `name`, each in `case`, joined by `_`.
fn joined(name: &str, case: fn(&str) -> String) -> String {
    words(name)
        .iter()
        .map(|w| case(w))
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
