//! Helpers for generated expressions: arithmetic on values from the input must not panic.

use super::error::{Error, Result};

/// `a - b`; an underflow (hostile input) is an error.
#[inline]
pub fn sub(a: u64, b: u64) -> Result<u64> {
    match a.checked_sub(b) {
        Some(v) => Ok(v),
        None => Err(Error::invalid(
            None,
            format!("a value of at least {b}"),
            format!("{a}"),
        )),
    }
}

/// `a / b`; division by zero is an error.
#[inline]
pub fn div(a: u64, b: u64) -> Result<u64> {
    match a.checked_div(b) {
        Some(v) => Ok(v),
        None => Err(Error::invalid(None, "a non-zero divisor", "0")),
    }
}

/// `align(a, n)`: `a` rounded up to a multiple of `n` (`a` when `n` is 0 or 1); saturates.
#[inline]
pub fn align(a: u64, n: u64) -> u64 {
    if n <= 1 {
        return a;
    }
    match a % n {
        0 => a,
        r => a.saturating_add(n - r),
    }
}

/// A computed value narrowed to its field's type, or an `Inconsistent` error.
#[inline]
pub fn fit<T: TryFrom<u64>>(v: u64) -> Result<T> {
    match T::try_from(v) {
        Ok(x) => Ok(x),
        Err(_) => Err(Error::inconsistent(format!(
            "computed value {v} does not fit in {}",
            core::any::type_name::<T>()
        ))),
    }
}

/// Runs `f`: a place for `?` inside an expression that must yield a `Result`.
#[inline]
pub fn eval<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    f()
}

/// Runs `f` and pushes array index `i` onto the path of its error.
#[inline]
pub fn in_index<T>(i: usize, f: impl FnOnce() -> Result<T>) -> Result<T> {
    f().map_err(|e| e.in_index(i))
}

/// A value as `u32`, saturating (ids wider than 32 bits are unknown anyway).
#[inline]
pub fn saturate_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Encoding: a collection or region of `found` elements/bytes must have `expected`.
#[inline]
pub fn check_len(found: usize, expected: u64, unit: &str, expr: &str) -> Result<()> {
    if found as u64 == expected {
        Ok(())
    } else {
        Err(Error::inconsistent(format!(
            "{found} {unit} but {expr} = {expected}"
        )))
    }
}

/// Decoding: a computed field must hold what the writer would compute, else the input
/// could not be written back the same (the error names the expression and both values).
#[inline]
pub fn check_computed(found: u64, computed: u64, expr: &str) -> Result<()> {
    if found == computed {
        Ok(())
    } else {
        Err(Error::invalid(
            None,
            format!("{expr} = {computed}"),
            format!("{found}"),
        ))
    }
}

/// Encoding: a conditional field must be present exactly when its condition holds.
#[inline]
pub fn check_presence(present: bool, cond: bool, cond_text: &str) -> Result<()> {
    if present == cond {
        Ok(())
    } else {
        Err(presence_error(present, cond_text))
    }
}

/// Kept out of line: encoders check every conditional field, and this is the rare path.
#[cold]
#[inline(never)]
fn presence_error(present: bool, cond_text: &str) -> Error {
    if present {
        Error::inconsistent(format!("the field is present but `{cond_text}` is false"))
    } else {
        Error::inconsistent(format!("the field is absent but `{cond_text}` is true"))
    }
}

/// Encoding: a switch variant must be the one the discriminant selects.
#[inline]
pub fn check_variant(
    ok: bool,
    variant: &str,
    on: &str,
    value: impl core::fmt::Display,
) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::inconsistent(format!(
            "variant {variant} does not match `{on}` = {value}"
        )))
    }
}

/// Decoding: a switch discriminant with no arm.
#[cold]
pub fn no_arm(offset: u64, on: &str, value: impl core::fmt::Display, arms: &str) -> Error {
    Error::invalid(
        Some(offset),
        format!("`{on}` to be one of {arms}"),
        format!("{value}"),
    )
}
