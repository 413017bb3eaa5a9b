//! `spec!`: expands perfdata spec files into Rust at compile time.
//!
//! The committed code in `perfdata/src/generated/` comes from `cargo xtask gen`, which runs
//! the same generator ahead of time so the result can be read, reviewed and diffed. This
//! macro is the other door into that generator: a crate (or a test) can compile a spec of
//! its own — for instance the perf.data spec plus one more feature — without an xtask step:
//!
//! ```text
//! perfdata_derive::spec! {
//!     dir: "../spec/perf_data",
//!     extra: "feature Mine = 40 { value: u32 }",
//! }
//! ```
//! `dir` is relative to the calling crate's `Cargo.toml`; `extra` is spec text appended as
//! one more file. The code lands in `pub mod <spec name>` (the directory's name, or
//! `inline` without `dir`). Spec errors become compile errors carrying the diagnostics.

use proc_macro::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};

struct SpecInput {
    dir: Option<LitStr>,
    extra: Vec<LitStr>,
}

impl Parse for SpecInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut out = SpecInput {
            dir: None,
            extra: vec![],
        };
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![:]>()?;
            let value: LitStr = input.parse()?;
            match key.to_string().as_str() {
                "dir" if out.dir.is_none() => out.dir = Some(value),
                "extra" => out.extra.push(value),
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        "expected `dir: \"path\"` (once) or `extra: \"spec text\"`",
                    ))
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(out)
    }
}

#[proc_macro]
pub fn spec(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as SpecInput);
    match expand(&input) {
        Ok(tokens) => tokens,
        Err(message) => {
            let span = input
                .dir
                .as_ref()
                .map_or_else(proc_macro2::Span::call_site, LitStr::span);
            quote::quote_spanned!(span=> compile_error!(#message);).into()
        }
    }
}

fn expand(input: &SpecInput) -> Result<TokenStream, String> {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?;
    let mut sources = vec![];
    let mut name = "inline".to_string();
    let mut tracked = vec![];
    if let Some(dir) = &input.dir {
        let dir = std::path::Path::new(&manifest_dir).join(dir.value());
        name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map_err(|e| format!("reading {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "pds"))
            .collect();
        files.sort();
        for f in files {
            let text =
                std::fs::read_to_string(&f).map_err(|e| format!("reading {}: {e}", f.display()))?;
            tracked.push(f.display().to_string());
            sources.push((f.display().to_string(), text));
        }
    }
    for (i, extra) in input.extra.iter().enumerate() {
        sources.push((format!("<extra {i}>"), extra.value()));
    }
    let spec = spec::load_sources(&name, &sources).map_err(|d| d.to_string())?;
    let code: proc_macro2::TokenStream = codegen::generate_rust(&spec)
        .parse()
        .map_err(|e| format!("generated code does not parse: {e}"))?;
    // Rebuild when a spec file changes.
    let track = tracked.iter().map(|p| {
        quote!(
            const _: &str = include_str!(#p);
        )
    });
    // A module block, because the generated source begins with inner attributes.
    let module = syn::Ident::new(&spec.name, proc_macro2::Span::call_site());
    Ok(quote!(pub mod #module { #code #(#track)* }).into())
}
