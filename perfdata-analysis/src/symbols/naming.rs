//! How a frame is named in every output: one place for folded stacks, the viewers'
//! exports, the tables and off-CPU stacks, so that the same frame reads the same
//! everywhere.

use super::dso::{DsoId, Dsos};
use super::frame::{Frame, TRUNCATED};

/// A frame as inferno names it from perf script's `ip sym+off (dso)` line.
pub fn frame_name(dsos: &Dsos, f: &Frame) -> String {
    tidy_generic(raw_frame_name(dsos, f))
}

/// A frame's name before inferno's tidying (shared with the viewers' exports,
/// [`crate::export::sampled`]): its symbol, else its object's file name in brackets
/// (`[libc.so.6]`), `[unknown]` outside any map, `[truncated]` at a cut stack's end.
pub fn raw_frame_name(dsos: &Dsos, f: &Frame) -> String {
    if f.truncated {
        return TRUNCATED.to_string();
    }
    let func = f.symbol.map(|s| dsos.symbol_name(s));
    let module = f.dso.map(|(d, _)| dsos.get(d).name.as_str());
    match (func, module) {
        (Some(func), _) => func.to_string(),
        (None, Some(m)) => format!("[{}]", &m[m.rfind('/').map_or(0, |i| i + 1)..]),
        (None, None) => "[unknown]".to_string(),
    }
}

/// A frame's name as a `;`-separated stack can hold it: [`raw_frame_name`] with `;`
/// made `:`, the parameter list kept (off-CPU stacks).
pub fn unsplit_frame_name(dsos: &Dsos, f: &Frame) -> String {
    raw_frame_name(dsos, f).replace(';', ":")
}

/// The names of a frame at `map_ip` in `dso` by its debug info: the function containing
/// the address and the functions inlined there, outermost first, each after a `;`. Empty
/// when the object has no DWARF there.
pub fn inlined_names(dsos: &Dsos, dso: DsoId, map_ip: u64) -> String {
    let addr = dsos.lookup_address(dso, map_ip);
    let mut out = String::new();
    // Innermost first, ending with the containing function.
    for n in dsos.inline_frames(dso, addr).into_iter().rev() {
        out.push(';');
        out.push_str(&tidy_generic(n));
    }
    out
}

/// inferno's `tidy_generic`, applied to every name of a folded stack: `;` → `:`, and the
/// parameter list dropped (not a Go
/// method's `.(` nor C++'s `(anonymous namespace)`).
pub fn tidy_generic(func: String) -> String {
    let mut func = func.replace(';', ":");
    let mut depth = 0i32;
    let mut last_dot = None;
    let mut cut = func.len();
    for (i, c) in func.char_indices() {
        match c {
            '<' | '{' | '[' => depth += 1,
            '>' | '}' | ']' | ')' => depth -= 1,
            '(' => {
                if depth == 0 {
                    let go = last_dot == Some(i);
                    let anon = func[i..].starts_with("(anonymous namespace)");
                    if !go && !anon {
                        cut = i;
                        break;
                    }
                }
                depth += 1;
            }
            '.' => last_dot = Some(i + 1),
            _ => {}
        }
    }
    func.truncate(cut);
    func
}

#[cfg(test)]
mod tests {
    use super::tidy_generic;

    #[test]
    fn tidies_as_inferno() {
        assert_eq!(tidy_generic("foo(int)".into()), "foo");
        assert_eq!(tidy_generic("a;b".into()), "a:b");
        assert_eq!(
            tidy_generic("net/http.(*Client).Do".into()),
            "net/http.(*Client).Do"
        );
        assert_eq!(
            tidy_generic("(anonymous namespace)::f(int)".into()),
            "(anonymous namespace)::f"
        );
        assert_eq!(
            tidy_generic("std::vector<int(*)()>::x(int)".into()),
            "std::vector<int(*)()>::x"
        );
    }
}
