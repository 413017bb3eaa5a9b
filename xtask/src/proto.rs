//! `cargo run -p xtask --features proto -- proto`: regenerates the pprof `profile.proto`
//! types (perfdata-analysis/src/export/pprof/proto.rs) with prost-build. Run once when the
//! proto changes; builds never need `protoc`, which this step does (Debian:
//! `protobuf-compiler`).

use anyhow::{Context, Result};
use std::path::Path;

/// The proto, as google/pprof publishes it: `proto/profile.proto` of
/// github.com/google/pprof at commit 963a80db3d677353229bc3e7655d11709e9bcaaf, unmodified
/// (its Apache-2.0 header kept).
const PROTO: &str = "perfdata-analysis/proto/profile.proto";
/// The checked-in Rust types.
const OUT: &str = "perfdata-analysis/src/export/pprof/proto.rs";

/// Writes [`OUT`] from [`PROTO`].
pub fn run(root: &Path) -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let proto = root.join(PROTO);
    prost_build::Config::new()
        .out_dir(tmp.path())
        .compile_protos(
            &[&proto],
            &[proto.parent().context("proto has a directory")?],
        )
        .context("prost-build (it runs `protoc`: install protobuf-compiler)")?;
    let generated = std::fs::read_to_string(tmp.path().join("perftools.profiles.rs"))?;
    let text = format!(
        "// generated — do not edit. From {PROTO} (Apache-2.0, google/pprof) by prost-build:\n\
         //     cargo run -p xtask --features proto -- proto\n\n{generated}"
    );
    std::fs::write(root.join(OUT), text)?;
    // Formatted as `cargo fmt` would, so that a rerun on an unchanged proto is no change.
    let fmt = std::process::Command::new("rustfmt")
        .args(["--edition", "2021"])
        .arg(root.join(OUT))
        .status()?;
    anyhow::ensure!(fmt.success(), "rustfmt failed on {OUT}");
    println!("wrote {OUT}");
    Ok(())
}
