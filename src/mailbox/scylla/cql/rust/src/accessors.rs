//! The result accessors of the C ABI: status and message, column names and types, typed cell
//! getters, the paging state and `qim_cql_result_free`. Each one checks its handle and indices and
//! answers with a status code (or a neutral value where the header says so) instead of failing; the
//! pointers they hand out point into the result and live exactly as long as it.

use std::ffi::{c_char, CStr};

use crate::codes::*;
use crate::ffi::free_box;
use crate::result::{qim_cql_result, Cell};

/// The cell at (`row`, `col`); `BAD_ARG` for a NULL result or an index out of range.
pub(crate) unsafe fn cell<'a>(r: *const qim_cql_result, row: usize, col: usize) -> Result<&'a Cell, i32> {
    let Some(r) = r.as_ref() else {
        return Err(QIM_CQL_ERR_BAD_ARG);
    };
    r.rows
        .get(row)
        .and_then(|cells| cells.get(col))
        .ok_or(QIM_CQL_ERR_BAD_ARG)
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_code(r: *const qim_cql_result) -> i32 {
    if r.is_null() {
        return QIM_CQL_ERR_BAD_ARG;
    }
    (*r).code
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_message(r: *const qim_cql_result) -> *const c_char {
    if r.is_null() {
        return c"result is NULL".as_ptr();
    }
    (*r).message.as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_row_count(r: *const qim_cql_result) -> usize {
    if r.is_null() {
        return 0;
    }
    (*r).rows.len()
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_column_count(r: *const qim_cql_result) -> usize {
    if r.is_null() {
        return 0;
    }
    (*r).columns.len()
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_column_name(r: *const qim_cql_result, col: usize) -> *const c_char {
    let Some(r) = r.as_ref() else { return std::ptr::null() };
    r.columns.get(col).map_or(std::ptr::null(), |c| c.name.as_ptr())
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_column_type(r: *const qim_cql_result, col: usize) -> i32 {
    let Some(r) = r.as_ref() else { return TYPE_INVALID };
    r.columns.get(col).map_or(TYPE_INVALID, |c| c.typ)
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_column_index(r: *const qim_cql_result, name: *const c_char) -> i64 {
    if r.is_null() || name.is_null() {
        return -1;
    }
    let want = CStr::from_ptr(name);
    (*r).columns
        .iter()
        .position(|c| c.name.as_c_str() == want)
        .map_or(-1, |i| i as i64)
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_is_null(r: *const qim_cql_result, row: usize, col: usize) -> i32 {
    match cell(r, row, col) {
        Ok(Cell::Null) => 1,
        Ok(_) => 0,
        Err(_) => -1,
    }
}

unsafe fn getter<T>(
    r: *const qim_cql_result,
    row: usize,
    col: usize,
    out: *mut T,
    f: impl FnOnce(&Cell) -> Option<T>,
) -> i32 {
    if out.is_null() {
        return QIM_CQL_ERR_BAD_ARG;
    }
    match cell(r, row, col) {
        Err(code) => code,
        Ok(Cell::Null) => QIM_CQL_ERR_NULL,
        Ok(c) => match f(c) {
            Some(v) => {
                *out = v;
                QIM_CQL_OK
            }
            None => QIM_CQL_ERR_BAD_ARG,
        },
    }
}

/// `getter` for a cell handed out as a pointer and a length: `len` must not be NULL either, and is
/// written only on success.
unsafe fn span_getter<T>(
    r: *const qim_cql_result,
    row: usize,
    col: usize,
    out: *mut *const T,
    len: *mut usize,
    f: impl FnOnce(&Cell) -> Option<(*const T, usize)>,
) -> i32 {
    if len.is_null() {
        return QIM_CQL_ERR_BAD_ARG;
    }
    getter(r, row, col, out, |c| {
        f(c).map(|(p, n)| {
            *len = n;
            p
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_get_i64(
    r: *const qim_cql_result,
    row: usize,
    col: usize,
    out: *mut i64,
) -> i32 {
    getter(r, row, col, out, |c| match c {
        Cell::I64(v) => Some(*v),
        Cell::I32(v) => Some(i64::from(*v)),
        Cell::I16(v) => Some(i64::from(*v)),
        Cell::I8(v) => Some(i64::from(*v)),
        _ => None,
    })
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_get_i32(
    r: *const qim_cql_result,
    row: usize,
    col: usize,
    out: *mut i32,
) -> i32 {
    getter(r, row, col, out, |c| match c {
        Cell::I32(v) => Some(*v),
        Cell::I16(v) => Some(i32::from(*v)),
        Cell::I8(v) => Some(i32::from(*v)),
        _ => None,
    })
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_get_bool(
    r: *const qim_cql_result,
    row: usize,
    col: usize,
    out: *mut bool,
) -> i32 {
    getter(r, row, col, out, |c| match c {
        Cell::Bool(v) => Some(*v),
        _ => None,
    })
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_get_text(
    r: *const qim_cql_result,
    row: usize,
    col: usize,
    out: *mut *const c_char,
    len: *mut usize,
) -> i32 {
    span_getter(r, row, col, out, len, |c| match c {
        Cell::Text(v) => Some((v.as_ptr() as *const c_char, v.len() - 1)),
        _ => None,
    })
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_get_blob(
    r: *const qim_cql_result,
    row: usize,
    col: usize,
    out: *mut *const u8,
    len: *mut usize,
) -> i32 {
    span_getter(r, row, col, out, len, |c| match c {
        Cell::Blob(v) => Some((v.as_ptr(), v.len())),
        _ => None,
    })
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_get_i64_list(
    r: *const qim_cql_result,
    row: usize,
    col: usize,
    out: *mut *const i64,
    len: *mut usize,
) -> i32 {
    span_getter(r, row, col, out, len, |c| match c {
        Cell::ListI64(v) => Some((v.as_ptr(), v.len())),
        _ => None,
    })
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_paging_state(
    r: *const qim_cql_result,
    out: *mut *const u8,
    len: *mut usize,
) -> i32 {
    if r.is_null() {
        return 0;
    }
    let (p, n, has) = match &(*r).paging_state {
        Some(p) => (p.as_ptr(), p.len(), 1),
        None => (std::ptr::null(), 0, 0),
    };
    if !out.is_null() {
        *out = p;
    }
    if !len.is_null() {
        *len = n;
    }
    has
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_free(r: *mut qim_cql_result) {
    free_box(r)
}
