//! ftrace's `bprint` events (`trace_printk` with a constant format): the record holds
//! the format's address, found in the tracing data's `printk_formats`, and the
//! arguments packed in binary; libtraceevent (`get_bprint_format`,
//! `make_bprint_args`) rebuilds the format as `"%ps: " + format` and the arguments as
//! numbers and strings.

use super::eval::{Env, Res};
use super::parse::Arg;
use super::pieces::{pieces as parse_pieces, Piece};
use super::TraceError;

/// The pieces and arguments of one bprint record.
pub(super) fn pieces(env: &Env<'_>) -> Res<(Vec<Piece>, Vec<Arg>)> {
    let field = |name: &str| {
        env.format
            .fields
            .iter()
            .find(|f| !f.common && f.name == name)
            .ok_or_else(|| TraceError::Unsupported {
                event: env.event(),
                what: format!("a bprint event without a `{name}` field"),
            })
    };
    let (fmt_field, buf, ip_field) = (field("fmt")?, field("buf")?, field("ip")?);
    let addr = env.read(fmt_field.offset, fmt_field.size, "fmt")?;
    let format = match env.printk.get(&addr) {
        Some(p) => format!("%ps: {p}"),
        None => format!("%ps: (NO FORMAT FOUND at {addr:x})\n"),
    };
    let ip = env.read(ip_field.offset, ip_field.size, "ip")?;
    let mut args = vec![Arg::Atom((ip as i64).to_string())];
    let f = format.as_bytes();
    let end = env.raw.len();
    let mut b = buf.offset;
    let mut p = 5; // after "%ps: "
    while b < end && p < f.len() {
        if f[p] == b'%' {
            let mut ls: usize = 0;
            loop {
                p += 1;
                let Some(&c) = f.get(p) else { break };
                let mut string = false;
                let mut number = false;
                match c {
                    b'l' => {
                        ls += 1;
                        continue;
                    }
                    b'L' => {
                        ls = 2;
                        continue;
                    }
                    b'0'..=b'9' | b'.' => continue,
                    b'z' | b'Z' => {
                        ls = 1;
                        continue;
                    }
                    b'p' => {
                        ls = 1;
                        if f.get(p + 1).is_some_and(u8::is_ascii_alphanumeric) {
                            p += 1;
                            let special = match f[p] {
                                b's' | b'S' | b'x' => false,
                                b'f' | b'F' => f.get(p + 1) == Some(&b'w'),
                                _ => true,
                            };
                            // A dereferenced pointer: the kernel stored its text.
                            if special && env.raw.get(b).is_some_and(|c| (0x20..0x7f).contains(c)) {
                                string = true;
                            }
                        }
                        number = !string;
                    }
                    b'd' | b'u' | b'i' | b'x' | b'X' | b'o' => number = true,
                    b'*' => {
                        b = (b + 3) & !3;
                        let v = env.read(b, 4, "buf")?;
                        b += 4;
                        args.push(Arg::Atom((v as i64).to_string()));
                        continue;
                    }
                    b's' => string = true,
                    _ => {}
                }
                if number {
                    let size = match ls {
                        0 => 4,
                        1 => env.long_size,
                        2 => 8,
                        other => other,
                    };
                    b = (b + 3) & !3;
                    let v = env.read(b, size, "buf")?;
                    b += size;
                    args.push(Arg::Atom((v as i64).to_string()));
                }
                if string {
                    let s = env.cstr(b, "buf")?;
                    b += s.len() + 1;
                    args.push(Arg::BStr(String::from_utf8_lossy(s).into_owned()));
                }
                break;
            }
        }
        p += 1;
    }
    let pieces = parse_pieces(f, args.len()).map_err(|e| TraceError::Unsupported {
        event: env.event(),
        what: format!("its printk format: {e}"),
    })?;
    Ok((pieces, args))
}
