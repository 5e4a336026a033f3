//! The result handle (`qim_cql_result`): status, message, columns, rows and paging state, built from
//! the driver's responses. Every cell is decoded once, into an owned `Cell`, when the response
//! arrives, so that the pointers the accessors hand to C stay valid as long as the result and reading
//! a cell never fails halfway. The accessors that read it are in `accessors` and `render`.

use std::ffi::CString;

use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};
use scylla::response::query_result::QueryResult;
use scylla::value::{CqlValue, Row};

use crate::codes::*;
use crate::error::Failure;
use crate::ffi::cstring_lossy;
use crate::render::display_value;

/// Opaque result handle: status, rows, paging state.
pub struct qim_cql_result {
    pub(crate) code: i32,
    pub(crate) message: CString,
    pub(crate) columns: Vec<Column>,
    pub(crate) rows: Vec<Vec<Cell>>,
    pub(crate) paging_state: Option<Vec<u8>>,
}

pub(crate) struct Column {
    pub(crate) name: CString,
    pub(crate) typ: i32,
}

pub(crate) enum Cell {
    Null,
    I64(i64),
    I32(i32),
    I16(i16),
    I8(i8),
    Bool(bool),
    /// UTF-8 text followed by one NUL byte (not counted in the length handed out).
    Text(Vec<u8>),
    Blob(Vec<u8>),
    ListI64(Vec<i64>),
    /// A value of a type the getters do not cover, kept as a display string for `render`.
    Other(String),
}

/// A result with status `code`, `message` and no columns, rows or paging state.
fn status_only(code: i32, message: CString) -> qim_cql_result {
    qim_cql_result {
        code,
        message,
        columns: Vec::new(),
        rows: Vec::new(),
        paging_state: None,
    }
}

/// A result with status `code`, `message` and no rows.
pub(crate) fn error_result(code: i32, message: impl AsRef<str>) -> Box<qim_cql_result> {
    Box::new(status_only(code, cstring_lossy(message.as_ref())))
}

pub(crate) fn failure_result(f: Failure) -> Box<qim_cql_result> {
    error_result(f.code, f.message)
}

pub(crate) fn into_result(r: Result<qim_cql_result, Failure>) -> Box<qim_cql_result> {
    match r {
        Ok(v) => Box::new(v),
        Err(f) => failure_result(f),
    }
}

/// An OK result with no columns and no rows, which responses are then absorbed into.
pub(crate) fn empty_ok() -> qim_cql_result {
    status_only(QIM_CQL_OK, CString::default())
}

fn type_code(t: &ColumnType) -> i32 {
    match t {
        ColumnType::Native(n) => match n {
            NativeType::BigInt => TYPE_BIGINT,
            NativeType::Int => TYPE_INT,
            NativeType::SmallInt => TYPE_SMALLINT,
            NativeType::TinyInt => TYPE_TINYINT,
            NativeType::Boolean => TYPE_BOOLEAN,
            NativeType::Text | NativeType::Ascii => TYPE_TEXT,
            NativeType::Blob => TYPE_BLOB,
            NativeType::Timestamp => TYPE_TIMESTAMP,
            NativeType::Counter => TYPE_COUNTER,
            NativeType::Uuid => TYPE_UUID,
            NativeType::Timeuuid => TYPE_TIMEUUID,
            _ => TYPE_OTHER,
        },
        ColumnType::Collection {
            typ: CollectionType::List(inner) | CollectionType::Set(inner),
            ..
        } if matches!(**inner, ColumnType::Native(NativeType::BigInt)) => TYPE_LIST_BIGINT,
        _ => TYPE_OTHER,
    }
}

fn text_cell(s: String) -> Cell {
    let mut v = s.into_bytes();
    v.push(0);
    Cell::Text(v)
}

fn cell_of(v: Option<CqlValue>) -> Cell {
    let v = match v {
        None | Some(CqlValue::Empty) => return Cell::Null,
        Some(v) => v,
    };
    match v {
        CqlValue::BigInt(x) => Cell::I64(x),
        CqlValue::Counter(c) => Cell::I64(c.0),
        CqlValue::Timestamp(t) => Cell::I64(t.0),
        CqlValue::Int(x) => Cell::I32(x),
        CqlValue::SmallInt(x) => Cell::I16(x),
        CqlValue::TinyInt(x) => Cell::I8(x),
        CqlValue::Boolean(b) => Cell::Bool(b),
        CqlValue::Text(s) | CqlValue::Ascii(s) => text_cell(s),
        CqlValue::Blob(b) => Cell::Blob(b),
        CqlValue::Uuid(u) => Cell::Blob(u.as_bytes().to_vec()),
        CqlValue::Timeuuid(u) => Cell::Blob(u.as_bytes().to_vec()),
        CqlValue::List(items) | CqlValue::Set(items) if items.iter().all(|it| matches!(it, CqlValue::BigInt(_))) => {
            Cell::ListI64(
                items
                    .iter()
                    .map(|it| match it {
                        CqlValue::BigInt(x) => *x,
                        _ => 0,
                    })
                    .collect(),
            )
        }
        other => Cell::Other(display_value(&other)),
    }
}

/// An OTHER failure "`what`: error", for a response the driver cannot decode.
fn decode_failure<E: std::fmt::Display>(what: &'static str) -> impl FnOnce(E) -> Failure {
    move |e| Failure::new(QIM_CQL_ERR_OTHER, format!("{what}: {e}"))
}

/// Appends the rows of one response to `acc`, taking the column list from the first response.
pub(crate) fn absorb(acc: &mut qim_cql_result, qr: QueryResult) -> Result<(), Failure> {
    if !qr.is_rows() {
        return Ok(());
    }
    let rows = qr.into_rows_result().map_err(decode_failure("cannot read rows"))?;
    if acc.columns.is_empty() {
        acc.columns = rows
            .column_specs()
            .iter()
            .map(|c| Column {
                name: cstring_lossy(c.name()),
                typ: type_code(c.typ()),
            })
            .collect();
    }
    let iter = rows.rows::<Row>().map_err(decode_failure("cannot read rows"))?;
    for r in iter {
        let r = r.map_err(decode_failure("cannot decode a row"))?;
        acc.rows.push(r.columns.into_iter().map(cell_of).collect());
    }
    Ok(())
}
