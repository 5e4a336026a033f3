//! Helpers for the FFI boundary itself: catching panics before they unwind into C (`guard`), reading
//! C strings and arrays with the NULL and UTF-8 checks every exported function needs, and freeing a
//! handle (`free_box`). They know nothing about CQL; the other modules call them on every argument
//! they receive from C.

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::Failure;

/// A C string of `s` (an interior NUL, which C cannot carry, becomes the two characters `\0`).
pub(crate) fn cstring_lossy(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs `f`, turning a panic into `on_panic(message)`.
pub(crate) fn guard<T>(f: impl FnOnce() -> T, on_panic: impl FnOnce(String) -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(p) => on_panic(format!("internal panic in qim_cql: {}", panic_message(&*p))),
    }
}

/// The UTF-8 string at `p`; `BAD_ARG` naming `what` if `p` is NULL or not UTF-8.
pub(crate) unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::bad_arg(format!("{what} is NULL")));
    }
    CStr::from_ptr(p)
        .to_str()
        .map_err(|_| Failure::bad_arg(format!("{what} is not valid UTF-8")))
}

/// The `len` elements at `p` (`p` may be NULL when `len` is 0); `BAD_ARG` naming `what` otherwise.
pub(crate) unsafe fn slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::bad_arg(format!("{what} is NULL with length {len}")));
    }
    Ok(std::slice::from_raw_parts(p, len))
}

/// Frees a handle made by `Box::into_raw` (nothing for NULL); a panic in its destructor stays here.
pub(crate) unsafe fn free_box<T>(p: *mut T) {
    if p.is_null() {
        return;
    }
    guard(|| drop(Box::from_raw(p)), |_| ())
}
