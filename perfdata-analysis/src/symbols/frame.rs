//! A resolved address: the object and symbol a stack frame is in.

use super::dso::{DsoId, SymbolId};

/// A resolved address: the map it is in, and the symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The address; 0 in a [`Frame::truncated`] frame.
    pub ip: u64,
    /// Looked up in the kernel's maps rather than the process's.
    pub kernel: bool,
    /// (DSO, map-relative address) when a map covers the address.
    pub dso: Option<(DsoId, u64)>,
    /// The function covering the address; `None` when no map or symbol does.
    pub symbol: Option<SymbolId>,
    /// Not an address: the outermost end of a stack whose unwinding stopped short (the
    /// stack copy ended, no rule applied, the frame limit). Shown as `[truncated]`.
    pub truncated: bool,
}

impl Frame {
    /// The `[truncated]` end of a stack cut short.
    pub fn truncated() -> Frame {
        Frame {
            ip: 0,
            kernel: false,
            dso: None,
            symbol: None,
            truncated: true,
        }
    }
}

/// How a [`Frame::truncated`] frame is named in every output.
pub const TRUNCATED: &str = "[truncated]";
