//! `%p` and the kernel's pointer extensions as libtraceevent prints them
//! (`print_arg_pointer`): `%pS %ps %pF %pf` (a kernel symbol, `+0x` offset for the
//! capitals), `%pM %pm` (MAC), `%pI4 %pi4 %pI6 %pI6c %pISpc` (IP addresses, sockaddrs),
//! `%pU` (UUID/GUID), `%*ph` (hex bytes of a dynamic array), and plain `%p` as glibc
//! prints it (`0x…`, `(nil)`).

use super::eval::{Env, Res};
use super::parse::Arg;
use crate::rt::Endianness;
use crate::tracepoint::Field;
use std::io::Write;

/// `print_arg_pointer`: `spec` is the conversion (`%pS`, `%pI4`…), `plen` its `*`
/// value (1 without one).
pub(crate) fn print(
    env: &Env<'_>,
    out: &mut Vec<u8>,
    spec: &[u8],
    plen: i32,
    arg: &Arg,
) -> Res<()> {
    if let Arg::BStr(s) = arg {
        out.extend_from_slice(s.as_bytes());
        return Ok(());
    }
    let after = spec
        .iter()
        .position(|&c| c == b'p')
        .map_or(&[][..], |i| &spec[i + 1..]);
    let at = |i: usize| after.get(i).copied().unwrap_or(0);
    match at(0) {
        c @ (b'F' | b'f' | b'S' | b's') => {
            let v = env.num(arg)?;
            match env.kernel.resolve(v) {
                Some((name, offset)) => {
                    out.extend_from_slice(name.as_bytes());
                    if matches!(c, b'F' | b'S') {
                        write!(out, "+0x{offset:x}").expect("writes to a Vec");
                    }
                }
                None if env.long_size == 4 => {
                    write!(out, "0x{:x}", v as u32).expect("writes to a Vec")
                }
                None => write!(out, "0x{v:x}").expect("writes to a Vec"),
            }
        }
        b'M' | b'm' => mac(env, out, after, arg)?,
        b'I' | b'i' => ip(env, out, after, arg)?,
        b'U' => uuid(env, out, at(1), arg)?,
        b'h' => raw_buffer(env, out, at(1), plen, arg)?,
        _ => {
            let v = env.num(arg)?;
            if v == 0 {
                out.extend_from_slice(b"(nil)");
            } else {
                write!(out, "0x{v:x}").expect("writes to a Vec");
            }
        }
    }
    Ok(())
}

/// The field a MAC/IP/UUID conversion prints: `Err` text for another argument kind,
/// `None` for an unknown field (nothing printed).
fn field_arg<'e>(env: &Env<'e>, out: &mut Vec<u8>, arg: &Arg) -> Option<&'e Field> {
    match arg {
        Arg::Field(name) => env.format.field(name),
        other => {
            write!(out, "ARG TYPE NOT FIELD BUT {}", other.type_number()).expect("writes to a Vec");
            None
        }
    }
}

fn mac(env: &Env<'_>, out: &mut Vec<u8>, f: &[u8], arg: &Arg) -> Res<()> {
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    let sep: &str = match (at(0), at(1)) {
        (b'm', _) => "",
        (b'M', b'F') => "-",
        _ => ":",
    };
    let reverse = at(1) == b'R';
    let Some(field) = field_arg(env, out, arg) else {
        return Ok(());
    };
    if field.size != 6 {
        out.extend_from_slice(b"INVALIDMAC");
        return Ok(());
    }
    let mut b = env.bytes(field.offset, 6, &field.name)?.to_vec();
    if reverse {
        b.reverse();
    }
    let text: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
    out.extend_from_slice(text.join(sep).as_bytes());
    Ok(())
}

/// `parse_ip4_print_args`: whether `%pI4h`/`%pI4l` reverse the bytes.
fn ip4_reverse(env: &Env<'_>, c: u8) -> bool {
    match c {
        b'h' => env.endian == Endianness::Little,
        b'l' => true,
        _ => false,
    }
}

fn ip4(out: &mut Vec<u8>, leading_zeros: bool, reverse: bool, b: &[u8]) {
    let mut b = [b[0], b[1], b[2], b[3]];
    if reverse {
        b.reverse();
    }
    let s: Vec<String> = b
        .iter()
        .map(|x| {
            if leading_zeros {
                format!("{x:03}")
            } else {
                x.to_string()
            }
        })
        .collect();
    out.extend_from_slice(s.join(".").as_bytes());
}

/// `print_ip6_addr`: eight groups of four hex digits, colons with `I`.
fn ip6(out: &mut Vec<u8>, colons: bool, b: &[u8]) {
    for j in (0..16).step_by(2) {
        write!(out, "{:02x}{:02x}", b[j], b[j + 1]).expect("writes to a Vec");
        if colons && j < 14 {
            out.push(b':');
        }
    }
}

/// `print_ip6c_addr`: the compressed form (longest run of zero groups as `::`, a
/// v4-mapped or ISATAP address ending in dotted IPv4).
fn ip6c(out: &mut Vec<u8>, b: &[u8]) {
    let word = |i: usize| u16::from_be_bytes([b[2 * i], b[2 * i + 1]]);
    let v4mapped = b[..8].iter().all(|&x| x == 0) && b[8..12] == [0, 0, 0xff, 0xff];
    let isatap = (b[8] | 0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe;
    let use_v4 = v4mapped || isatap;
    let range = if use_v4 { 6 } else { 8 };
    let mut zeros = [0usize; 8];
    for (i, z) in zeros.iter_mut().enumerate().take(range) {
        *z = (i..range).take_while(|&j| word(j) == 0).count();
    }
    let mut longest = 1;
    let mut colonpos = None;
    for (i, &z) in zeros.iter().enumerate().take(range) {
        if z > longest {
            longest = z;
            colonpos = Some(i);
        }
    }
    let mut needcolon = false;
    let mut i = 0;
    while i < range {
        if Some(i) == colonpos {
            if needcolon || i == 0 {
                out.push(b':');
            }
            out.push(b':');
            needcolon = false;
            i += longest;
            continue;
        }
        if needcolon {
            out.push(b':');
        }
        write!(out, "{:x}", word(i)).expect("writes to a Vec");
        needcolon = true;
        i += 1;
    }
    if use_v4 {
        if needcolon {
            out.push(b':');
        }
        ip4(out, false, false, &b[12..16]);
    }
}

/// `print_ip_arg`: `f` is the text after `%p` (`I4`, `i6`, `ISpc`…).
fn ip(env: &Env<'_>, out: &mut Vec<u8>, f: &[u8], arg: &Arg) -> Res<()> {
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    let i = at(0);
    match at(1) {
        b'4' => {
            let reverse = ip4_reverse(env, at(2));
            let Some(field) = field_arg(env, out, arg) else {
                return Ok(());
            };
            if field.size != 4 {
                out.extend_from_slice(b"INVALIDIPv4");
                return Ok(());
            }
            ip4(
                out,
                i == b'i',
                reverse,
                env.bytes(field.offset, 4, &field.name)?,
            );
        }
        b'6' => {
            let compressed = i == b'I' && at(2) == b'c';
            let Some(field) = field_arg(env, out, arg) else {
                return Ok(());
            };
            if field.size != 16 {
                out.extend_from_slice(b"INVALIDIPv6");
                return Ok(());
            }
            let b = env.bytes(field.offset, 16, &field.name)?;
            if compressed {
                ip6c(out, b);
            } else {
                ip6(out, i == b'I', b);
            }
        }
        b'S' => sockaddr(env, out, i, &f[2.min(f.len())..], arg)?,
        _ => {}
    }
    Ok(())
}

/// `print_ipsa_arg`: a `struct sockaddr_storage` (`%pISpc`: port, compressed).
fn sockaddr(env: &Env<'_>, out: &mut Vec<u8>, i: u8, f: &[u8], arg: &Arg) -> Res<()> {
    let mut k = 0;
    let (mut port, mut compressed) = (false, false);
    if i == b'I' {
        if f.get(k) == Some(&b'p') {
            port = true;
            k += 1;
        }
        if f.get(k) == Some(&b'c') {
            compressed = true;
            k += 1;
        }
    }
    let reverse = ip4_reverse(env, f.get(k).copied().unwrap_or(0));
    let Some(field) = field_arg(env, out, arg) else {
        return Ok(());
    };
    // `ss_family` as the machine perf runs on stores it.
    let family = env.read_native(field.offset, 2, &field.name)?;
    const AF_INET: u64 = 2;
    const AF_INET6: u64 = 10;
    match family {
        AF_INET => {
            if field.size < 16 {
                out.extend_from_slice(b"INVALIDIPv4");
                return Ok(());
            }
            let b = env.bytes(field.offset, 8, &field.name)?;
            ip4(out, i == b'i', reverse, &b[4..8]);
            if port {
                write!(out, ":{}", u16::from_be_bytes([b[2], b[3]])).expect("writes to a Vec");
            }
        }
        AF_INET6 => {
            if field.size < 28 {
                out.extend_from_slice(b"INVALIDIPv6");
                return Ok(());
            }
            let b = env.bytes(field.offset, 24, &field.name)?;
            if port {
                out.push(b'[');
            }
            if compressed {
                ip6c(out, &b[8..24]);
            } else {
                ip6(out, i == b'I', &b[8..24]);
            }
            if port {
                write!(out, "]:{}", u16::from_be_bytes([b[2], b[3]])).expect("writes to a Vec");
            }
        }
        _ => {}
    }
    Ok(())
}

/// `print_uuid_arg`: `%pU[bBlL]`.
fn uuid(env: &Env<'_>, out: &mut Vec<u8>, variant: u8, arg: &Arg) -> Res<()> {
    const GUID: [usize; 16] = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];
    let upper = matches!(variant, b'L' | b'B');
    let guid = matches!(variant, b'L' | b'l');
    let Some(field) = field_arg(env, out, arg) else {
        return Ok(());
    };
    if field.size != 16 {
        out.extend_from_slice(b"INVALIDUUID");
        return Ok(());
    }
    let b = env.bytes(field.offset, 16, &field.name)?;
    for i in 0..16 {
        let x = b[if guid { GUID[i] } else { i }];
        if upper {
            write!(out, "{x:02X}")
        } else {
            write!(out, "{x:02x}")
        }
        .expect("writes to a Vec");
        if matches!(i, 3 | 5 | 7 | 9) {
            out.push(b'-');
        }
    }
    Ok(())
}

/// `print_raw_buff_arg`: `%*ph[CDN]` of a dynamic array, at most `plen` bytes.
fn raw_buffer(env: &Env<'_>, out: &mut Vec<u8>, variant: u8, plen: i32, arg: &Arg) -> Res<()> {
    let sep: &[u8] = match variant {
        b'C' => b":",
        b'D' => b"-",
        b'N' => b"",
        _ => b" ",
    };
    let Arg::DynArray(i) = arg else {
        write!(out, "ARG TYPE NOT FIELD BUT {}", arg.type_number()).expect("writes to a Vec");
        return Ok(());
    };
    let Some(field) = env.format.fields.get(*i) else {
        return Err(env.outside("a dynamic array"));
    };
    let loc = env.read(field.offset, field.size, &field.name)?;
    let len = ((loc >> 16) as i32).min(plen);
    let Ok(len) = usize::try_from(len) else {
        return Ok(());
    };
    let b = env.bytes((loc & 0xffff) as usize, len, &field.name)?;
    for (k, x) in b.iter().enumerate() {
        if k > 0 {
            out.extend_from_slice(sep);
        }
        write!(out, "{x:02x}").expect("writes to a Vec");
    }
    Ok(())
}
