//! C++ names as perf prints them, by the demangler perf itself uses.
//!
//! perf (binutils' `cplus_demangle`, without `DMGL_PARAMS`) and `c++filt` demangle with
//! libiberty's `cp-demangle.c`. libstdc++ exports the same code as `__cxa_demangle`
//! (GCC's copy of libiberty), and every machine that runs C++ programs has it: it is
//! loaded at run time, so perfdata does not depend on it. Measured over this machine's
//! libstdc++ and C++ programs (`conformance/tests/demangle_against_cxxfilt.rs`),
//! cpp_demangle alone refused some of GCC's manglings (an unresolved name scoped by
//! `St`, `srSt24__is_bitwise_relocatable…`) and printed some others differently
//! (dropped template-argument parameters, substitutions resolved to the wrong prefix);
//! libiberty agrees with `c++filt` by construction. Without libstdc++ (or for a name
//! too long for its stack arrays) [`crate::symbols::elf::demangle`] falls back on cpp_demangle.

use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::OnceLock;

/// `__cxa_demangle(mangled, buffer, length, status)`.
type CxaDemangle =
    unsafe extern "C" fn(*const c_char, *mut c_char, *mut usize, *mut c_int) -> *mut c_char;

/// libiberty puts its work arrays on the stack (about 72 bytes per character of the
/// name, plus its recursion): longer names are left to cpp_demangle, so that a hostile
/// or huge name cannot overflow a worker thread's 2 MiB stack.
const MAX_LEN: usize = 8 * 1024;

fn cxa_demangle() -> Option<CxaDemangle> {
    static FUNC: OnceLock<Option<CxaDemangle>> = OnceLock::new();
    *FUNC.get_or_init(|| {
        // SAFETY: dlopen/dlsym with NUL-terminated names; the handle is never closed, so
        // the function pointer stays valid for the life of the process.
        unsafe {
            let handle = libc::dlopen(c"libstdc++.so.6".as_ptr(), libc::RTLD_NOW);
            if handle.is_null() {
                return None;
            }
            let sym = libc::dlsym(handle, c"__cxa_demangle".as_ptr());
            if sym.is_null() {
                return None;
            }
            Some(std::mem::transmute::<*mut libc::c_void, CxaDemangle>(sym))
        }
    })
}

/// The full demangled name (parameters, return type of a template function, qualifiers
/// and clone suffixes: what `c++filt -i` prints), or `None` when libiberty is not
/// available or refuses the name.
pub fn full(mangled: &str) -> Option<String> {
    if mangled.len() > MAX_LEN {
        return None;
    }
    let f = cxa_demangle()?;
    let c = CString::new(mangled).ok()?;
    let mut status: c_int = 0;
    // SAFETY: a NUL-terminated input, no buffer of ours (libiberty mallocs the result),
    // and the result freed with the C allocator that made it.
    unsafe {
        let out = f(
            c.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut status,
        );
        if out.is_null() {
            return None;
        }
        let s = (status == 0).then(|| CStr::from_ptr(out).to_string_lossy().into_owned());
        libc::free(out.cast());
        s
    }
}

/// The name as perf prints it (libiberty without `DMGL_PARAMS` and `DMGL_VERBOSE`:
/// what `c++filt -i -p` prints): [`full`] without the top-level parameter list, the
/// function's qualifiers, its clone suffixes and a template function's return type.
pub fn perf_name(mangled: &str) -> Option<String> {
    let full = full(mangled)?;
    // Special names (`_ZT…` vtables, typeinfo and thunks, `_ZG…` guard variables and
    // transaction clones): libiberty prints their inner encodings with parameters even
    // without DMGL_PARAMS.
    if mangled[2..].starts_with(['T', 'G']) {
        return Some(full);
    }
    without_signature(&full).map(str::to_string)
}

/// `RET NAME(PARAMS) QUALS [clone .x]` → `NAME`; `None` when the text is not of that
/// shape (a function-pointer return type printed around the name).
fn without_signature(full: &str) -> Option<&str> {
    let mut s = full;
    // Clone suffixes: without DMGL_PARAMS libiberty stops reading after the name.
    while let Some(i) = s.rfind(" [clone ").filter(|_| s.ends_with(']')) {
        s = &s[..i];
    }
    // The function's own qualifiers (those of `this`), after its parameter list.
    loop {
        let before = s;
        for q in [
            " const",
            " volatile",
            " restrict",
            " &&",
            " &",
            " transaction_safe",
            " noexcept",
        ] {
            if let Some(rest) = s.strip_suffix(q) {
                s = rest;
            }
        }
        if s.len() == before.len() {
            break;
        }
    }
    if !s.ends_with(')') {
        // Not a function: a variable or a local entity, printed whole.
        return Some(full.trim_end());
    }
    // The parameter list: parentheses are balanced in libiberty's output.
    let mut depth = 0usize;
    let mut open = None;
    for (i, c) in s.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let name = &s[..open?];
    if name.is_empty() || name.ends_with(')') && !name.ends_with("operator()") {
        // `void (*f<int>(int))(double)`: the return type wraps the name.
        return None;
    }
    if !name.ends_with('>') {
        // Only template functions (other than constructors, destructors and
        // conversions) have their return type printed.
        return Some(name);
    }
    Some(&name[return_type_end(name)..])
}

/// Where the name of a template function starts after its return type (0 when it has
/// none): after the last space outside brackets that is not part of an operator's name
/// (`operator< <int>`, `operator>><char>`, `operator new`, `operator bool`).
fn return_type_end(name: &str) -> usize {
    let b = name.as_bytes();
    let mut depth = 0i32;
    let mut i = b.len();
    while i > 0 {
        i -= 1;
        // An operator's name, its brackets and spaces included, skipped whole; outside
        // the template arguments (inside, `<` and `>` are theirs).
        if depth == 0 {
            if let Some(start) = operator_start(&name[..=i]) {
                i = start;
                continue;
            }
        }
        match b[i] {
            b'>' | b')' | b']' | b'}' => depth += 1,
            b'<' | b'(' | b'[' | b'{' => depth -= 1,
            b' ' if depth == 0 => return i + 1,
            _ => {}
        }
    }
    0
}

/// When `s` ends with an operator's name up to its symbols and spaces (`operator`,
/// `operator>>`, `operator< `, `operator()`), where that name starts.
fn operator_start(s: &str) -> Option<usize> {
    let symbols = s
        .trim_end_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .len();
    let word = s[..symbols].strip_suffix("operator")?;
    // `operator` itself, not the end of `my_operator`.
    let ok = word.is_empty() || word.ends_with(|c: char| !c.is_ascii_alphanumeric() && c != '_');
    ok.then_some(word.len())
}

#[cfg(test)]
mod tests {
    use super::without_signature;

    #[test]
    fn drops_what_perf_does_not_print() {
        for (full, name) in [
            (
                "std::enable_if<std::__is_bitwise_relocatable<double, void>::value, double*>::type std::__relocate_a_1<double, double>(double*, double*, double*, std::allocator<double>&)",
                "std::__relocate_a_1<double, double>",
            ),
            ("Acc::operator()(double)", "Acc::operator()"),
            ("main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()"),
            ("main::$_0::operator()(int) const", "main::$_0::operator()"),
            ("Vec::operator[](unsigned long) const", "Vec::operator[]"),
            ("Key::operator<(Key const&) const", "Key::operator<"),
            ("Key::operator bool() const", "Key::operator bool"),
            ("operator<<(Out&, double)", "operator<<"),
            ("Node::operator new(unsigned long, Arena&)", "Node::operator new"),
            ("operator delete[](void*)", "operator delete[]"),
            (
                "std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
                "std::operator<< <std::char_traits<char> >",
            ),
            ("bool std::operator< <int>(int const&, int const&)", "std::operator< <int>"),
            (
                "std::istream& std::operator>><char, std::char_traits<char> >(std::istream&, char&)",
                "std::operator>><char, std::char_traits<char> >",
            ),
            ("bool std::operator==<int>(int const&, int const&)", "std::operator==<int>"),
            (
                "bool __gnu_cxx::operator!=<double*>(__gnu_cxx::__normal_iterator<double*> const&)",
                "__gnu_cxx::operator!=<double*>",
            ),
            ("unsigned long f<int>(int)", "f<int>"),
            ("auto main::{lambda(auto:1)#1}::operator()<int>(int) const", "main::{lambda(auto:1)#1}::operator()<int>"),
            ("void* Node::operator new<int>(unsigned long)", "Node::operator new<int>"),
            ("std::vector<int, std::allocator<int> >::vector<int*, void>(int*, int*)", "std::vector<int, std::allocator<int> >::vector<int*, void>"),
            ("foo(int) [clone .constprop.0] [clone .isra.0]", "foo"),
            ("foo(int)::count", "foo(int)::count"),
            ("std::cout", "std::cout"),
            ("(anonymous namespace)::f(int)", "(anonymous namespace)::f"),
            ("std::string::size() const &&", "std::string::size"),
        ] {
            assert_eq!(without_signature(full), Some(name), "{full}");
        }
        // A function-pointer return type printed around the name: not guessed.
        assert_eq!(without_signature("void (*f<int>(int))(double)"), None);
    }
}
