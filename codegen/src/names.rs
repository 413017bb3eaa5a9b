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

pub use spec::names::{screaming_snake, snake};
