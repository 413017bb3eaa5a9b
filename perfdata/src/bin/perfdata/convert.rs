//! `perfdata convert`: byte order, layout and compression of a file.

use crate::{EndianArg, LayoutArg};
use perfdata::rt::Endianness;
use std::path::Path;

pub fn convert(
    input: &Path,
    output: &Path,
    endian: Option<EndianArg>,
    layout: Option<LayoutArg>,
    decompress: bool,
    compress: Option<(bool, i32)>,
    typed: bool,
) -> Result<(), String> {
    use perfdata::convert::{convert_file, ConvertOptions};
    use perfdata::transform::CompressedKind;
    let opts = ConvertOptions {
        endian: endian.map(|e| match e {
            EndianArg::Little => Endianness::Little,
            EndianArg::Big => Endianness::Big,
        }),
        layout: layout.map(|l| match l {
            LayoutArg::File => perfdata::container::Layout::File,
            LayoutArg::Pipe => perfdata::container::Layout::Pipe,
        }),
        decompress,
        compress: compress.map(|(v1, level)| {
            let kind = if v1 {
                CompressedKind::Compressed
            } else {
                CompressedKind::Compressed2
            };
            (kind, level)
        }),
        typed,
    };
    convert_file(input, output, &opts).map_err(|e| e.to_string())
}
