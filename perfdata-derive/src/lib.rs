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
    let extra: Vec<(String, String)> = input
        .extra
        .iter()
        .enumerate()
        .map(|(i, e)| (format!("<extra {i}>"), e.value()))
        .collect();
    // The same loader and generator as `cargo xtask gen`, on tokens (no printing and
    // re-parsing).
    let (spec, tracked) = match &input.dir {
        Some(dir) => {
            let dir = std::path::Path::new(&manifest_dir).join(dir.value());
            let files = spec::spec_files(&dir).map_err(|d| d.to_string())?;
            let spec = spec::load_dir_with(&dir, &extra).map_err(|d| d.to_string())?;
            (spec, files)
        }
        None => (
            spec::load_sources("inline", &extra).map_err(|d| d.to_string())?,
            vec![],
        ),
    };
    let code = codegen::generate_tokens(&spec);
    // Rebuild when a spec file changes.
    let track = tracked.iter().map(|p| {
        let p = p.display().to_string();
        quote!(
            const _: &str = include_str!(#p);
        )
    });
    // A module block, because the generated source begins with inner attributes.
    let module = syn::Ident::new(&spec.name, proc_macro2::Span::call_site());
    Ok(quote!(pub mod #module { #code #(#track)* }).into())
}
