//! The format string → literal text and conversions, each conversion bound to its
//! argument (libtraceevent's `parse_args`, which builds an event's `print_cache`).
//!
//! libtraceevent's scanner accepts only `# h l L . z Z 0-9 - *` between `%` and the
//! conversion, and the conversions `d u i x X o s p`: anything else (`%c`, `% d`, `%+d`,
//! `%j`…) prints as `>c<` and takes no argument, so that the arguments after it shift.
//! perf 6.1 prints exactly that, and so do we.

use super::parse::PrintFmtError;

/// A piece of the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Literal text, escapes (`\n`, `\t`, `\"`…) and `%%` resolved.
    Text(Vec<u8>),
    /// `%d %u %i %x %X %o` with argument `arg`; `ls` is libtraceevent's length count
    /// (`hh` -2 … `ll` 2), which sets the C type the value is passed as.
    Number {
        spec: Vec<u8>,
        arg: usize,
        star: Option<usize>,
        ls: i32,
    },
    /// `%p` and its extensions (`%pS`, `%pI4`, `%pM`, `%*ph`…).
    Pointer {
        spec: Vec<u8>,
        arg: usize,
        star: Option<usize>,
    },
    /// `%s`.
    Str {
        spec: Vec<u8>,
        arg: usize,
        star: Option<usize>,
    },
}

/// The pieces of `format` for `nargs` arguments.
pub(crate) fn pieces(format: &[u8], nargs: usize) -> Result<Vec<Piece>, PrintFmtError> {
    let mut out = vec![];
    let mut next_arg = 0;
    let mut at = 0;
    while at < format.len() {
        let used = if format[at] == b'%' && format.get(at + 1) != Some(&b'%') {
            conversion(&format[at..], nargs, &mut next_arg, &mut out)?
        } else {
            text(&format[at..], &mut out)
        };
        at += used.max(1);
    }
    Ok(out)
}

/// `parse_arg_string`: text up to the next conversion.
fn text(f: &[u8], out: &mut Vec<Piece>) -> usize {
    let mut s = vec![];
    let mut i = 0;
    while i < f.len() {
        match f[i] {
            b'\\' => {
                i += 1;
                let Some(&c) = f.get(i) else {
                    break;
                };
                s.push(match c {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    other => other,
                });
            }
            b'%' if f.get(i + 1) == Some(&b'%') => {
                s.push(b'%');
                i += 1;
            }
            b'%' => break,
            c => s.push(c),
        }
        i += 1;
    }
    out.push(Piece::Text(s));
    i
}

fn bad(f: &[u8]) -> PrintFmtError {
    PrintFmtError::BadConversion(String::from_utf8_lossy(f).into_owned())
}

/// `parse_arg_format`: one conversion at `f[0] == '%'`; returns the bytes it used.
fn conversion(
    f: &[u8],
    nargs: usize,
    next_arg: &mut usize,
    out: &mut Vec<Piece>,
) -> Result<usize, PrintFmtError> {
    let mut ls = 0i32;
    let mut star = None;
    let mut i = 1;
    let take = |next_arg: &mut usize, i: usize| {
        if *next_arg < nargs {
            *next_arg += 1;
            Ok(*next_arg - 1)
        } else {
            Err(bad(&f[..=i.min(f.len() - 1)]))
        }
    };
    while i < f.len() {
        match f[i] {
            b'#' | b'.' | b'z' | b'Z' | b'0'..=b'9' | b'-' => {}
            b'h' => ls -= 1,
            b'l' => ls += 1,
            b'L' => ls = 2,
            b'*' => {
                if star.is_some() {
                    return Err(bad(&f[..=i]));
                }
                star = Some(take(next_arg, i)?);
            }
            b'p' => {
                let arg = take(next_arg, i)?;
                i += pointer_suffix(&f[i + 1..]);
                let spec = f[..=i.min(f.len() - 1)].to_vec();
                if spec.len() > 31 {
                    return Err(bad(&spec));
                }
                out.push(Piece::Pointer { spec, arg, star });
                return Ok(i + 1);
            }
            b'd' | b'u' | b'i' | b'x' | b'X' | b'o' => {
                let arg = take(next_arg, i)?;
                let spec = f[..=i].to_vec();
                if spec.len() > 30 || !(-2..=2).contains(&ls) {
                    return Err(bad(&spec));
                }
                out.push(Piece::Number {
                    spec,
                    arg,
                    star,
                    ls,
                });
                return Ok(i + 1);
            }
            b's' => {
                let arg = take(next_arg, i)?;
                let spec = f[..=i].to_vec();
                if spec.len() > 31 {
                    return Err(bad(&spec));
                }
                out.push(Piece::Str { spec, arg, star });
                return Ok(i + 1);
            }
            c => {
                out.push(Piece::Text(vec![b'>', c, b'<']));
                return Ok(i + 1);
            }
        }
        i += 1;
    }
    // The format ended inside the conversion: nothing printed for it.
    Ok(i)
}

/// `parse_arg_format_pointer`: how many characters after `%p` belong to it (`S`,
/// `I4`, `ISpc`, `MR`, `Ub`, `hC`…).
fn pointer_suffix(f: &[u8]) -> usize {
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    match at(0) {
        b'F' | b'S' | b'f' | b's' => 1,
        b'M' | b'm' => 1 + usize::from(matches!(at(1), b'R' | b'F')),
        b'I' | b'i' => {
            let mut ret = 0;
            let mut index = 2;
            let kind = at(1);
            if matches!(kind, b'S' | b'4' | b'6') {
                let mut six = kind == b'6';
                if kind == b'S' {
                    while matches!(at(index), b'p' | b'f' | b's') {
                        ret += 1;
                        index += 1;
                    }
                }
                if kind != b'6' {
                    if matches!(at(index), b'h' | b'n' | b'l' | b'b') {
                        ret += 1;
                        index += 1;
                    }
                    if kind == b'4' {
                        ret += 1;
                    } else {
                        six = true;
                    }
                }
                if six {
                    if at(index) == b'c' {
                        ret += 1;
                    }
                    ret += 1;
                }
            }
            ret + 1
        }
        b'U' => 1 + usize::from(matches!(at(1), b'L' | b'l' | b'B' | b'b')),
        b'h' => 1 + usize::from(matches!(at(1), b'C' | b'D' | b'N')),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(format: &str, nargs: usize) -> Vec<String> {
        pieces(format.as_bytes(), nargs)
            .unwrap()
            .into_iter()
            .map(|p| match p {
                Piece::Text(t) => format!("T{}", String::from_utf8_lossy(&t)),
                Piece::Number { spec, arg, ls, .. } => {
                    format!("N{}@{arg}/{ls}", String::from_utf8_lossy(&spec))
                }
                Piece::Pointer { spec, arg, .. } => {
                    format!("P{}@{arg}", String::from_utf8_lossy(&spec))
                }
                Piece::Str { spec, arg, star } => {
                    format!("S{}@{arg}{star:?}", String::from_utf8_lossy(&spec))
                }
            })
            .collect()
    }

    #[test]
    fn conversions_and_text() {
        assert_eq!(
            show("a=%d b=%08llx %% c=%-16s\\n", 3),
            [
                "Ta=",
                "N%d@0/0",
                "T b=",
                "N%08llx@1/2",
                "T % c=",
                "S%-16s@2None",
                "T\n"
            ]
        );
        assert_eq!(
            show("%pS %pI4 %pISpc %pI6c %pMR %pUb %*ph %px", 9),
            [
                "P%pS@0",
                "T ",
                "P%pI4@1",
                "T ",
                "P%pISpc@2",
                "T ",
                "P%pI6c@3",
                "T ",
                "P%pMR@4",
                "T ",
                "P%pUb@5",
                "T ",
                "P%*ph@7",
                "T ",
                "P%p@8",
                "Tx"
            ]
        );
    }

    #[test]
    fn c_conversion_prints_marker_and_takes_no_argument() {
        assert_eq!(show("%c%d", 1), ["T>c<", "N%d@0/0"]);
        assert_eq!(show("% d", 1), ["T> <", "Td"]);
    }

    #[test]
    fn missing_argument_fails() {
        assert!(pieces(b"%d %d", 1).is_err());
        assert!(pieces(b"%lllx", 1).is_err());
    }
}
