//! Values of options that more than one command takes.

use perfdata::Endianness;

/// A byte order on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum EndianArg {
    Little,
    Big,
}

impl From<EndianArg> for Endianness {
    fn from(e: EndianArg) -> Self {
        match e {
            EndianArg::Little => Endianness::Little,
            EndianArg::Big => Endianness::Big,
        }
    }
}

/// A layout on the command line.
#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
pub enum LayoutArg {
    File,
    Pipe,
}
