//! Code generation from the spec IR: Rust decoders/encoders ([`rust`]) and the Markdown
//! format reference ([`docs`]).

pub mod docs;
pub mod names;
pub mod rust;

pub use docs::generate_markdown;
pub use rust::{generate_rust, generate_tokens, generated_header, rustfmt};
