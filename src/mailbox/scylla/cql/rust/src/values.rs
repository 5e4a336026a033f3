//! Bound values: the C `qim_cql_value` array a caller passes, checked and copied into owned `Value`s
//! before anything is sent (so an async call does not borrow the caller's memory, and a bad value is
//! `BAD_ARG` up front), and their serialization, which widens a value to the column's type where the
//! header promises it (bigint into timestamp/counter, int and smallint into wider integer columns).

use std::ffi::c_void;

use scylla::frame::response::result::{ColumnType, NativeType};
use scylla::serialize::value::SerializeValue;
use scylla::serialize::writers::{CellWriter, WrittenCellProof};
use scylla::serialize::SerializationError;
use scylla::value::{Counter, CqlTimestamp};

use crate::codes::*;
use crate::error::Failure;
use crate::ffi::slice;

/// One bound value, borrowed by the library only for the duration of the call that receives it.
#[repr(C)]
pub struct qim_cql_value {
    pub kind: i32,
    pub i64_: i64,
    pub ptr: *const c_void,
    pub len: usize,
}

#[derive(Debug, Clone)]
pub(crate) enum Value {
    Null,
    Unset,
    BigInt(i64),
    Int(i32),
    SmallInt(i16),
    Bool(bool),
    Text(String),
    Blob(Vec<u8>),
    ListBigInt(Vec<i64>),
    ListText(Vec<String>),
}

impl SerializeValue for Value {
    fn serialize<'b>(
        &self,
        typ: &ColumnType,
        writer: CellWriter<'b>,
    ) -> Result<WrittenCellProof<'b>, SerializationError> {
        match self {
            Value::Null => Ok(writer.set_null()),
            Value::Unset => Ok(writer.set_unset()),
            Value::BigInt(v) => match typ {
                ColumnType::Native(NativeType::Timestamp) => CqlTimestamp(*v).serialize(typ, writer),
                ColumnType::Native(NativeType::Counter) => Counter(*v).serialize(typ, writer),
                _ => v.serialize(typ, writer),
            },
            Value::Int(v) => match typ {
                ColumnType::Native(NativeType::BigInt) => i64::from(*v).serialize(typ, writer),
                _ => v.serialize(typ, writer),
            },
            Value::SmallInt(v) => match typ {
                ColumnType::Native(NativeType::BigInt) => i64::from(*v).serialize(typ, writer),
                ColumnType::Native(NativeType::Int) => i32::from(*v).serialize(typ, writer),
                _ => v.serialize(typ, writer),
            },
            Value::Bool(v) => v.serialize(typ, writer),
            Value::Text(s) => s.as_str().serialize(typ, writer),
            Value::Blob(b) => b.serialize(typ, writer),
            Value::ListBigInt(l) => l.serialize(typ, writer),
            Value::ListText(l) => l.serialize(typ, writer),
        }
    }
}

/// `x` as the narrower integer of a `cql_type` value; `BAD_ARG` naming value `i` if out of range.
fn narrow<T: TryFrom<i64>>(x: i64, i: usize, cql_type: &str) -> Result<T, Failure> {
    T::try_from(x).map_err(|_| Failure::bad_arg(format!("value {i}: {x} out of {cql_type} range")))
}

/// The UTF-8 text of a TEXT value (value `i` of the call, for the error).
unsafe fn text_of(v: &qim_cql_value, i: usize) -> Result<String, Failure> {
    let bytes = slice(v.ptr as *const u8, v.len, "text value")?;
    Ok(std::str::from_utf8(bytes)
        .map_err(|_| Failure::bad_arg(format!("value {i}: text is not valid UTF-8")))?
        .to_owned())
}

/// Checks and copies the `n` values at `values`; `BAD_ARG` naming the first bad one.
pub(crate) unsafe fn convert_values(values: *const qim_cql_value, n: usize) -> Result<Vec<Value>, Failure> {
    let raw = slice(values, n, "values")?;
    let mut out = Vec::with_capacity(raw.len());
    for (i, v) in raw.iter().enumerate() {
        out.push(match v.kind {
            VALUE_NULL => Value::Null,
            VALUE_UNSET => Value::Unset,
            VALUE_BIGINT => Value::BigInt(v.i64_),
            VALUE_INT => Value::Int(narrow(v.i64_, i, "int")?),
            VALUE_SMALLINT => Value::SmallInt(narrow(v.i64_, i, "smallint")?),
            VALUE_BOOLEAN => Value::Bool(v.i64_ != 0),
            VALUE_TEXT => Value::Text(text_of(v, i)?),
            VALUE_BLOB => Value::Blob(slice(v.ptr as *const u8, v.len, "blob value")?.to_vec()),
            VALUE_LIST_BIGINT => Value::ListBigInt(slice(v.ptr as *const i64, v.len, "list value")?.to_vec()),
            VALUE_LIST_TEXT => {
                let items = slice(v.ptr as *const qim_cql_value, v.len, "list value")?;
                let mut texts = Vec::with_capacity(items.len());
                for item in items {
                    if item.kind != VALUE_TEXT {
                        return Err(Failure::bad_arg(format!(
                            "value {i}: a text list holds an item of kind {}",
                            item.kind
                        )));
                    }
                    texts.push(text_of(item, i)?);
                }
                Value::ListText(texts)
            }
            other => return Err(Failure::bad_arg(format!("value {i}: unknown kind {other}"))),
        });
    }
    Ok(out)
}
