//! Evaluating a parsed print format against one RAW payload: numbers
//! (`eval_num_arg`), strings (`print_str_arg`), each conversion (`print_event_cache`),
//! and the fallback for a format that does not parse (`tep_print_fields`).
//!
//! Arithmetic is libtraceevent's: unsigned 64-bit, comparisons unsigned, shifts by the
//! low 6 bits (as x86 does), casts that mask without sign-extending, names reading as 0.
//! Where libtraceevent reads memory, we read the payload and stop at its end.

use super::cprintf::{self, Amount, Spec};
use super::num;
use super::parse::{Arg, FlagSym};
use super::pieces::Piece;
use super::{KernelSymbols, PrintFmt, TraceError};
use crate::rt::Endianness;
use crate::tracepoint::format::read_uint;
use crate::tracepoint::{Field, Format};
use std::collections::HashMap;
use std::io::Write;

pub(crate) type Res<T> = Result<T, TraceError>;

/// The widest width or precision printed (perf would print it; a hostile payload could
/// ask for gigabytes).
const MAX_WIDTH: usize = 1 << 16;

/// What evaluating one payload needs.
pub(crate) struct Env<'a> {
    pub raw: &'a [u8],
    pub endian: Endianness,
    pub long_size: usize,
    pub format: &'a Format,
    pub printk: &'a HashMap<u64, String>,
    pub kernel: &'a dyn KernelSymbols,
}

/// `eval_type_str`: a cast as libtraceevent applies it (masks, never sign-extends;
/// pointers, structs, `long` and unknown types unchanged). With `pointer`, the type's
/// trailing ` *` is dropped first (an element read through a cast array).
pub(crate) fn cast(val: u64, ty: &str, pointer: bool) -> u64 {
    if pointer {
        return match ty.strip_suffix('*') {
            Some(_) if ty.len() >= 2 => cast(val, &ty[..ty.len() - 2], false),
            _ => val,
        };
    }
    if ty.ends_with('*') || ty.starts_with("struct") {
        return val;
    }
    let ty = ty.strip_prefix("unsigned ").unwrap_or(ty);
    match ty {
        "u8" | "s8" | "char" => val & 0xff,
        "u16" | "s16" | "short" => val & 0xffff,
        "u32" | "s32" | "int" => val & 0xffff_ffff,
        _ => val,
    }
}

/// `eval_flag`: a `__print_flags`/`__print_symbolic` value: a number, one of the
/// softirq and hrtimer names libtraceevent knows, else -1.
fn eval_flag(value: &str) -> i64 {
    num::flag_value(value).unwrap_or(-1)
}

/// C's `isprint(c) || isspace(c)` for a `char` (bytes above 0x7f are negative: neither).
fn printable(c: u8) -> bool {
    (0x20..0x7f).contains(&c) || matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

impl<'a> Env<'a> {
    pub(crate) fn event(&self) -> String {
        if self.format.system.is_empty() {
            self.format.name.clone()
        } else {
            format!("{}:{}", self.format.system, self.format.name)
        }
    }

    pub(crate) fn outside(&self, what: &str) -> TraceError {
        TraceError::OutsidePayload {
            event: self.event(),
            field: what.to_string(),
            len: self.raw.len(),
        }
    }

    /// `tep_read_number`: 1, 2, 4 or 8 bytes in the payload's byte order; other sizes
    /// read as 0.
    pub(crate) fn read(&self, at: usize, size: usize, what: &str) -> Res<u64> {
        if !matches!(size, 1 | 2 | 4 | 8) {
            return Ok(0);
        }
        read_uint(self.raw, at, size, self.endian).ok_or_else(|| self.outside(what))
    }

    /// A number libtraceevent reads by dereferencing, in the byte order of the machine
    /// perf runs on.
    pub(crate) fn read_native(&self, at: usize, size: usize, what: &str) -> Res<u64> {
        let host = if cfg!(target_endian = "big") {
            Endianness::Big
        } else {
            Endianness::Little
        };
        read_uint(self.raw, at, size, host).ok_or_else(|| self.outside(what))
    }

    pub(crate) fn bytes(&self, at: usize, len: usize, what: &str) -> Res<&'a [u8]> {
        at.checked_add(len)
            .and_then(|end| self.raw.get(at..end))
            .ok_or_else(|| self.outside(what))
    }

    /// The C string at `at`, up to its NUL or the payload's end.
    pub(crate) fn cstr(&self, at: usize, what: &str) -> Res<&'a [u8]> {
        let rest = self.raw.get(at..).ok_or_else(|| self.outside(what))?;
        Ok(&rest[..rest.iter().position(|&c| c == 0).unwrap_or(rest.len())])
    }

    fn field_at(&self, index: usize) -> Res<&'a Field> {
        self.format
            .fields
            .get(index)
            .ok_or_else(|| self.outside("a dynamic array"))
    }

    /// `eval_num_arg`.
    pub(crate) fn num(&self, arg: &Arg) -> Res<u64> {
        Ok(match arg {
            Arg::Atom(a) => num::strtoull(a),
            Arg::Field(name) => match self.format.field(name) {
                Some(f) => self.read(f.offset, f.size, &f.name)?,
                None => 0,
            },
            Arg::Cast { ty, item } => cast(self.num(item)?, ty, false),
            Arg::DynArrayLen(i) => {
                let f = self.field_at(*i)?;
                self.read(f.offset, f.size, &f.name)? >> 16
            }
            Arg::DynArray(i) => {
                // libtraceevent yields the address of the data in perf's memory: we
                // yield its offset in the payload.
                let f = self.field_at(*i)?;
                self.read(f.offset, f.size, &f.name)? & 0xffff
            }
            Arg::Op(o) => return self.op(o),
            Arg::Null
            | Arg::Flags { .. }
            | Arg::Symbol { .. }
            | Arg::Hex { .. }
            | Arg::IntArray { .. }
            | Arg::Str(_)
            | Arg::BStr(_)
            | Arg::Bitmask(_) => 0,
        })
    }

    fn side(&self, a: &Option<Box<Arg>>) -> Res<u64> {
        a.as_deref().map_or(Ok(0), |a| self.num(a))
    }

    fn op(&self, o: &super::parse::Op) -> Res<u64> {
        match o.op.as_str() {
            "[" => return self.index(o),
            "?" => {
                let cond = self.side(&o.left)?;
                return match o.right.as_deref() {
                    Some(Arg::Op(c)) => self.side(if cond != 0 { &c.left } else { &c.right }),
                    Some(other) => self.num(other),
                    None => Ok(0),
                };
            }
            _ => {}
        }
        let l = self.side(&o.left)?;
        let r = self.side(&o.right)?;
        let div = |f: fn(u64, u64) -> u64| {
            if r == 0 {
                Err(TraceError::DivideByZero {
                    event: self.event(),
                })
            } else {
                Ok(f(l, r))
            }
        };
        Ok(match o.op.as_str() {
            "!" => u64::from(r == 0),
            "!=" => u64::from(l != r),
            "~" => !r,
            "|" => l | r,
            "||" => u64::from(l != 0 || r != 0),
            "&" => l & r,
            "&&" => u64::from(l != 0 && r != 0),
            "<" => u64::from(l < r),
            "<<" => l.wrapping_shl(r as u32),
            "<=" => u64::from(l <= r),
            ">" => u64::from(l > r),
            ">>" => l.wrapping_shr(r as u32),
            ">=" => u64::from(l >= r),
            "==" => u64::from(l == r),
            "-" => l.wrapping_sub(r),
            "+" => l.wrapping_add(r),
            "*" => l.wrapping_mul(r),
            "/" => div(|l, r| l / r)?,
            "%" => div(|l, r| l % r)?,
            // `^` and the rest: libtraceevent warns and reads 0.
            _ => 0,
        })
    }

    /// `x[i]`: an element of a field or a dynamic array, through any casts.
    fn index(&self, o: &super::parse::Op) -> Res<u64> {
        let right = self.side(&o.right)?;
        let mut larg = o.left.as_deref().unwrap_or(&Arg::Null);
        let mut cast_ty = None;
        while let Arg::Cast { ty, item } = larg {
            cast_ty.get_or_insert(ty);
            larg = item;
        }
        let (offset, size, what) = match larg {
            Arg::DynArray(i) => {
                let f = self.field_at(*i)?;
                let base = self.read(f.offset, f.size, &f.name)? & 0xffff;
                let size = if f.element_size != 0 {
                    f.element_size
                } else {
                    self.long_size
                };
                (base.wrapping_add(right), size, &f.name)
            }
            Arg::Field(name) => {
                let Some(f) = self.format.field(name) else {
                    return Ok(0);
                };
                let at = (f.offset as u64).wrapping_add(right.wrapping_mul(f.element_size as u64));
                (at, f.element_size, &f.name)
            }
            _ => {
                // libtraceevent evaluates both sides and does not know `[` there.
                self.side(&o.left)?;
                return Ok(0);
            }
        };
        let at = usize::try_from(offset).map_err(|_| self.outside(what))?;
        let v = self.read(at, size, what)?;
        Ok(match cast_ty {
            Some(ty) => cast(v, ty, true),
            None => v,
        })
    }

    /// The value of a `*` width or precision (C `int`).
    fn star(&self, arg: Option<usize>, args: &[Arg]) -> Res<Option<i32>> {
        let Some(i) = arg else { return Ok(None) };
        let v = self.num(&args[i])? as i32;
        if v.unsigned_abs() as usize > MAX_WIDTH {
            return Err(TraceError::TooWide {
                event: self.event(),
                width: i64::from(v),
            });
        }
        Ok(Some(v))
    }

    fn spec(&self, spec: &[u8]) -> Res<Option<Spec>> {
        let Some(s) = cprintf::parse(spec) else {
            return Ok(None);
        };
        for a in [Some(s.width), s.precision].into_iter().flatten() {
            if let Amount::Fixed(w) = a {
                if w > MAX_WIDTH {
                    return Err(TraceError::TooWide {
                        event: self.event(),
                        width: w as i64,
                    });
                }
            }
        }
        Ok(Some(s))
    }

    /// `print_str_to_seq`: `text` through the conversion `spec` (`%s`, `%-16s`…).
    pub(crate) fn put_str(
        &self,
        out: &mut Vec<u8>,
        spec: &[u8],
        star: Option<i32>,
        text: &[u8],
    ) -> Res<()> {
        match self.spec(spec)? {
            Some(s) => cprintf::string(out, &s, star, text),
            None => out.extend_from_slice(spec),
        }
        Ok(())
    }

    /// `print_str_arg`: an argument printed by a `%s` conversion.
    pub(crate) fn string(
        &self,
        out: &mut Vec<u8>,
        spec: &[u8],
        star: Option<i32>,
        arg: &Arg,
    ) -> Res<()> {
        match arg {
            Arg::Atom(a) => self.put_str(out, spec, star, a.as_bytes())?,
            Arg::BStr(s) => self.put_str(out, spec, star, s.as_bytes())?,
            Arg::Field(name) => {
                let Some(f) = self.format.field(name) else {
                    return Ok(());
                };
                if !f.traits.array && f.size == self.long_size {
                    // A pointer: a string of the kernel's printk formats, else its hex.
                    let addr = self.read_native(f.offset, self.long_size, &f.name)?;
                    match self.printk.get(&addr) {
                        Some(p) => out.extend_from_slice(p.as_bytes()),
                        None => write!(out, "{addr:x}").expect("writes to a Vec"),
                    }
                    return Ok(());
                }
                // A zero size means the rest of the payload.
                let len = if f.size != 0 {
                    f.size
                } else {
                    self.raw.len().saturating_sub(f.offset)
                };
                let b = self.bytes(f.offset, len, &f.name)?;
                let text = &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())];
                self.put_str(out, spec, star, text)?;
            }
            Arg::Flags {
                value,
                delim,
                flags,
            } => self.flags(out, spec, star, value, delim.as_deref(), flags)?,
            Arg::Symbol { value, symbols } => {
                let v = self.num(value)? as i64;
                match symbols.iter().find(|s| eval_flag(&s.value) == v) {
                    Some(s) => self.put_str(out, spec, star, s.name.as_bytes())?,
                    None => write!(out, "0x{:x}", v as u64).expect("writes to a Vec"),
                }
            }
            Arg::Hex { data, len, spaced } => {
                let Some(base) = self.array_base(data, "__print_hex")? else {
                    return Ok(());
                };
                let n = self.num(len)? as i32;
                let n = usize::try_from(n).unwrap_or(0);
                let b = self.bytes(base, n, "__print_hex")?;
                for (i, byte) in b.iter().enumerate() {
                    if i > 0 && *spaced {
                        out.push(b' ');
                    }
                    write!(out, "{byte:02x}").expect("writes to a Vec");
                }
            }
            Arg::IntArray {
                data,
                count,
                el_size,
            } => {
                let Some(base) = self.array_base(data, "__print_array")? else {
                    return Ok(());
                };
                let n = usize::try_from(self.num(count)? as i32).unwrap_or(0);
                let mut el = self.num(el_size)? as i32;
                let mut at = base;
                for i in 0..n {
                    if i > 0 {
                        out.push(b' ');
                    }
                    match el {
                        1 | 2 | 4 | 8 => {
                            let size = el as usize;
                            let v = self.read_native(at, size, "__print_array")?;
                            write!(out, "{v}").expect("writes to a Vec");
                        }
                        _ => {
                            let first = self.bytes(at, 1, "__print_array")?[0];
                            write!(out, "BAD SIZE:{el} 0x{first:x}").expect("writes to a Vec");
                            el = 1;
                        }
                    }
                    at += el as usize;
                }
            }
            Arg::Str(name) => {
                let Some(f) = self.format.field(name) else {
                    return Ok(());
                };
                let loc = self.read(f.offset, 4, &f.name)?;
                let mut at = (loc & 0xffff) as usize;
                if f.traits.relative {
                    at += f.offset + f.size;
                }
                let text = self.cstr(at, &f.name)?;
                self.put_str(out, spec, star, text)?;
            }
            Arg::Bitmask(name) => {
                let Some(f) = self.format.field(name) else {
                    return Ok(());
                };
                let loc = self.read(f.offset, 4, &f.name)?;
                let size = (loc >> 16) as usize;
                let mut at = (loc & 0xffff) as usize;
                if f.traits.relative {
                    at += f.offset + f.size;
                }
                let data = self.bytes(at, size, &f.name)?;
                let text = bitmask(data, self.endian);
                self.put_str(out, spec, star, &text)?;
            }
            Arg::Op(o) if o.op == "?" => {
                let cond = self.side(&o.left)?;
                if let Some(Arg::Op(c)) = o.right.as_deref() {
                    let pick = if cond != 0 { &c.left } else { &c.right };
                    if let Some(p) = pick.as_deref() {
                        self.string(out, spec, star, p)?;
                    }
                }
            }
            // Casts, other operations, dynamic arrays and their lengths: nothing.
            _ => {}
        }
        Ok(())
    }

    /// Where `__print_hex`/`__print_array` data starts: a dynamic array's data or a
    /// field in place (`None` for an unknown field, which prints nothing).
    fn array_base(&self, data: &Arg, what: &str) -> Res<Option<usize>> {
        match data {
            Arg::DynArray(i) => {
                let f = self.field_at(*i)?;
                Ok(Some(
                    (self.read(f.offset, f.size, &f.name)? & 0xffff) as usize,
                ))
            }
            Arg::Field(name) => Ok(self.format.field(name).map(|f| f.offset)),
            other => Err(TraceError::Unsupported {
                event: self.event(),
                what: format!("{what} of an argument of kind {}", other.type_number()),
            }),
        }
    }

    fn flags(
        &self,
        out: &mut Vec<u8>,
        spec: &[u8],
        star: Option<i32>,
        value: &Arg,
        delim: Option<&str>,
        flags: &[FlagSym],
    ) -> Res<()> {
        let mut val = self.num(value)? as i64;
        let mut printed = false;
        for f in flags {
            let fval = eval_flag(&f.value);
            if val == 0 && fval < 0 {
                self.put_str(out, spec, star, f.name.as_bytes())?;
                break;
            }
            if fval > 0 && (val & fval) == fval {
                if printed {
                    if let Some(d) = delim {
                        out.extend_from_slice(d.as_bytes());
                    }
                }
                self.put_str(out, spec, star, f.name.as_bytes())?;
                printed = true;
                val &= !fval;
            }
        }
        if val != 0 {
            if printed {
                if let Some(d) = delim {
                    out.extend_from_slice(d.as_bytes());
                }
            }
            write!(out, "0x{:x}", val as u64).expect("writes to a Vec");
        }
        Ok(())
    }

    /// `print_event_cache`: the whole text of a parsed format.
    pub(crate) fn write(&self, pf: &PrintFmt, out: &mut Vec<u8>) -> Res<()> {
        if pf.bprint {
            let (pieces, args) = super::bprint::pieces(self)?;
            return self.write_pieces(&pieces, &args, out);
        }
        self.write_pieces(&pf.pieces, &pf.args, out)
    }

    pub(crate) fn write_pieces(
        &self,
        pieces: &[Piece],
        args: &[Arg],
        out: &mut Vec<u8>,
    ) -> Res<()> {
        for p in pieces {
            match p {
                Piece::Text(t) => out.extend_from_slice(t),
                Piece::Number {
                    spec,
                    arg,
                    star,
                    ls,
                } => {
                    let star = self.star(*star, args)?;
                    let v = self.num(&args[*arg])?;
                    // The C type libtraceevent passes (char, short, int promoted to a
                    // 32-bit register; long and long long whole).
                    let reg = match ls {
                        -2 => u64::from(v as i8 as i32 as u32),
                        -1 => u64::from(v as i16 as i32 as u32),
                        0 => v & 0xffff_ffff,
                        _ => v,
                    };
                    match self.spec(spec)? {
                        Some(s) => cprintf::integer(out, &s, star, reg),
                        None => out.extend_from_slice(spec),
                    }
                }
                Piece::Pointer { spec, arg, star } => {
                    let plen = self.star(*star, args)?.unwrap_or(1);
                    super::pointer::print(self, out, spec, plen, &args[*arg])?;
                }
                Piece::Str { spec, arg, star } => {
                    let star = self.star(*star, args)?;
                    self.string(out, spec, star, &args[*arg])?;
                }
            }
        }
        Ok(())
    }

    /// `tep_print_fields`: ` name=value` for each field of an event whose print format
    /// does not parse.
    pub(crate) fn fields(&self, out: &mut Vec<u8>) -> Res<()> {
        for (i, f) in self
            .format
            .fields
            .iter()
            .enumerate()
            .filter(|f| !f.1.common)
        {
            out.push(b' ');
            out.extend_from_slice(f.name.as_bytes());
            out.push(b'=');
            self.field(out, i, f)?;
        }
        Ok(())
    }

    /// `tep_print_field`.
    fn field(&self, out: &mut Vec<u8>, index: usize, f: &Field) -> Res<()> {
        let t = f.traits;
        if t.array {
            let (mut at, mut len) = (f.offset, f.size);
            if t.dynamic {
                let v = self.read(at, len, &f.name)? as u32;
                at = (v & 0xffff) as usize;
                len = (v >> 16) as usize;
                if t.relative {
                    at += f.offset + f.size;
                }
            }
            let data = self.raw.get(at..).ok_or_else(|| self.outside(&f.name))?;
            let shown = &data[..len.min(data.len())];
            let is_text = shown.iter().take_while(|&&c| c != 0).all(|&c| printable(c));
            let sticky = &self.format.shown_as_array;
            if t.string && !sticky.get(index) && is_text {
                out.extend_from_slice(self.cstr(at, &f.name)?);
            } else {
                sticky.set(index);
                let b = self.bytes(at, len, &f.name)?;
                out.extend_from_slice(b"ARRAY[");
                for (i, byte) in b.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    write!(out, "{byte:02x}").expect("writes to a Vec");
                }
                out.push(b']');
            }
            return Ok(());
        }
        let v = self.read(f.offset, f.size, &f.name)?;
        let w = &mut *out;
        if t.pointer {
            write!(w, "0x{v:x}")
        } else if f.signed {
            match f.size {
                4 if t.long => write!(w, "0x{:x}", v as u32),
                4 => write!(w, "{}", v as i32),
                2 => write!(w, "{:2}", v as i16),
                1 => write!(w, "{}", v as i8),
                _ => write!(w, "{}", v as i64),
            }
        } else if t.long {
            write!(w, "0x{v:x}")
        } else {
            write!(w, "{v}")
        }
        .expect("writes to a Vec");
        Ok(())
    }
}

/// `print_bitmask_to_seq`: the mask as the kernel prints it, most significant byte
/// first, a comma every 32 bits.
fn bitmask(data: &[u8], endian: Endianness) -> Vec<u8> {
    let size = data.len();
    let nr_bits = size * 8;
    let mut str_size = nr_bits.div_ceil(4);
    if nr_bits > 0 {
        str_size += (nr_bits - 1) / 32;
    }
    let mut s = vec![0u8; str_size];
    let mut len = 0;
    let mut i = str_size as isize - 2;
    while i >= 0 {
        let index = match endian {
            Endianness::Big => size - (len + 1),
            Endianness::Little => len,
        };
        let hex = format!("{:02x}", data[index]);
        s[i as usize..i as usize + 2].copy_from_slice(hex.as_bytes());
        len += 1;
        if len & 3 == 0 && i > 0 {
            i -= 1;
            s[i as usize] = b',';
        }
        i -= 2;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_mask_without_sign() {
        assert_eq!(cast(u64::MAX, "int", false), 0xffff_ffff);
        assert_eq!(cast(u64::MAX, "s8", false), 0xff);
        assert_eq!(cast(u64::MAX, "unsigned short", false), 0xffff);
        assert_eq!(cast(u64::MAX, "long", false), u64::MAX);
        assert_eq!(cast(0x1ff, "u8 *", true), 0xff);
        assert_eq!(cast(0x1ff, "void *", false), 0x1ff);
    }

    #[test]
    fn bitmask_like_the_kernel() {
        let m = bitmask(&[0x01, 0x02, 0x03, 0x04, 0x05, 0, 0, 0], Endianness::Little);
        assert_eq!(String::from_utf8(m).unwrap(), "00000005,04030201");
        assert!(bitmask(&[], Endianness::Little).is_empty());
    }

    #[test]
    fn flags_names_and_softirqs() {
        assert_eq!(eval_flag("0x10"), 16);
        assert_eq!(eval_flag("RCU_SOFTIRQ"), 9);
        assert_eq!(eval_flag("GFP_KERNEL"), -1);
        assert_eq!(eval_flag("-1"), -1);
    }
}
