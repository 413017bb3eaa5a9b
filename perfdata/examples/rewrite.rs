//! Rewrites a perf.data file: `cargo run --example rewrite -- IN OUT [big|little] [typed]`.
use perfdata::container::PerfData;
use perfdata::model::PerfFile;
use perfdata::rt::Endianness;
use perfdata::write::{save, WriteOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1])?;
    let data = PerfData::open(&bytes)?;
    let mut model = PerfFile::read(&data)?;
    let mut opts = WriteOptions::default();
    for a in &args[3..] {
        match a.as_str() {
            "big" => opts = opts.endian(Endianness::Big),
            "little" => opts = opts.endian(Endianness::Little),
            "typed" => model.make_typed()?,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    save(&model, std::path::Path::new(&args[2]), opts)?;
    Ok(())
}
