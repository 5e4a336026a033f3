//! qim_cql: QIM's CQL client. The `scylla` driver (1.x, on tokio) behind a small C ABI.
//!
//! The C header `../qim_cql.h` is the contract; this file implements it. Rules kept everywhere:
//! - every exported function catches panics (`guard`), so no unwinding crosses the FFI boundary;
//! - every handle is a `Box` turned into a raw pointer, freed only by its own `*_free`/`*_close`;
//! - strings handed to C are owned by the handle they came from (result, error) and live as long as it.
//!
//! One multi-threaded tokio runtime (2 worker threads) per session. Blocking calls run the request
//! with `Runtime::block_on` on the caller's thread; asynchronous calls spawn a task whose completion
//! calls the caller's callback exactly once, from a runtime thread.

#![allow(non_camel_case_types)]
// The safety contract of every exported function (valid handles, live pointers, lengths) is written
// once, in qim_cql.h, rather than on each function.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, NewSessionError, PrepareError, RequestAttemptError};
use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::response::query_result::QueryResult;
use scylla::response::{PagingState, PagingStateResponse};
use scylla::serialize::value::SerializeValue;
use scylla::serialize::writers::{CellWriter, WrittenCellProof};
use scylla::serialize::SerializationError;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency, SerialConsistency, Statement};
use scylla::value::{Counter, CqlTimestamp, CqlValue, Row};
use tokio::runtime::Runtime;

// ---------------------------------------------------------------------------------------------
// Codes shared with qim_cql.h (keep the numbers in sync).

pub const QIM_CQL_OK: i32 = 0;
pub const QIM_CQL_ERR_CONNECT: i32 = 1;
pub const QIM_CQL_ERR_TIMEOUT: i32 = 2;
pub const QIM_CQL_ERR_UNAVAILABLE: i32 = 3;
pub const QIM_CQL_ERR_INVALID: i32 = 4;
pub const QIM_CQL_ERR_WRITE_TIMEOUT: i32 = 5;
pub const QIM_CQL_ERR_READ_TIMEOUT: i32 = 6;
pub const QIM_CQL_ERR_OVERLOADED: i32 = 7;
pub const QIM_CQL_ERR_CLOSED: i32 = 8;
pub const QIM_CQL_ERR_BAD_ARG: i32 = 9;
pub const QIM_CQL_ERR_NULL: i32 = 10;
pub const QIM_CQL_ERR_OTHER: i32 = 11;

const CONSISTENCY_DEFAULT: i32 = 0;
const CONSISTENCY_ANY: i32 = 1;
const CONSISTENCY_ONE: i32 = 2;
const CONSISTENCY_TWO: i32 = 3;
const CONSISTENCY_THREE: i32 = 4;
const CONSISTENCY_QUORUM: i32 = 5;
const CONSISTENCY_ALL: i32 = 6;
const CONSISTENCY_LOCAL_QUORUM: i32 = 7;
const CONSISTENCY_EACH_QUORUM: i32 = 8;
const CONSISTENCY_LOCAL_ONE: i32 = 9;
const CONSISTENCY_SERIAL: i32 = 10;
const CONSISTENCY_LOCAL_SERIAL: i32 = 11;

const VALUE_NULL: i32 = 0;
const VALUE_UNSET: i32 = 1;
const VALUE_BIGINT: i32 = 2;
const VALUE_INT: i32 = 3;
const VALUE_SMALLINT: i32 = 4;
const VALUE_BOOLEAN: i32 = 5;
const VALUE_TEXT: i32 = 6;
const VALUE_BLOB: i32 = 7;
const VALUE_LIST_BIGINT: i32 = 8;

const TYPE_INVALID: i32 = -1;
const TYPE_OTHER: i32 = 0;
const TYPE_BIGINT: i32 = 1;
const TYPE_INT: i32 = 2;
const TYPE_SMALLINT: i32 = 3;
const TYPE_TINYINT: i32 = 4;
const TYPE_BOOLEAN: i32 = 5;
const TYPE_TEXT: i32 = 6;
const TYPE_BLOB: i32 = 7;
const TYPE_LIST_BIGINT: i32 = 8;
const TYPE_TIMESTAMP: i32 = 9;
const TYPE_COUNTER: i32 = 10;
const TYPE_UUID: i32 = 11;
const TYPE_TIMEUUID: i32 = 12;

const BATCH_LOGGED: i32 = 0;
const BATCH_UNLOGGED: i32 = 1;

const WORKER_THREADS: usize = 2;
const DEFAULT_PORT: u16 = 9042;

// ---------------------------------------------------------------------------------------------
// C-visible structs.

/// Error out-parameter of connect/prepare. `message` is owned by the struct (free with
/// `qim_cql_error_clear`).
#[repr(C)]
pub struct qim_cql_error {
    pub code: i32,
    pub message: *mut c_char,
}

/// One bound value, borrowed by the library only for the duration of the call that receives it.
#[repr(C)]
pub struct qim_cql_value {
    pub kind: i32,
    pub i64_: i64,
    pub ptr: *const c_void,
    pub len: usize,
}

/// Per-call options; see qim_cql.h.
#[repr(C)]
pub struct qim_cql_exec_opts {
    pub consistency: i32,
    pub serial_consistency: i32,
    pub timestamp_us: i64,
    pub page_size: i32,
    pub max_rows: i64,
    pub paging_state: *const u8,
    pub paging_state_len: usize,
    pub timeout_ms: u32,
    pub idempotent: i32,
}

/// One statement of a batch.
#[repr(C)]
pub struct qim_cql_batch_item {
    pub prepared: *const qim_cql_prepared,
    pub values: *const qim_cql_value,
    pub n_values: usize,
}

pub type qim_cql_callback = Option<unsafe extern "C" fn(user_data: *mut c_void, result: *mut qim_cql_result)>;

/// Opaque session handle.
pub struct qim_cql_session {
    runtime: Option<Runtime>,
    session: Option<Arc<Session>>,
    /// Set when close starts: a request failing from then on reports QIM_CQL_ERR_CLOSED.
    closing: Arc<AtomicBool>,
}

/// Opaque prepared statement handle.
pub struct qim_cql_prepared {
    statement: PreparedStatement,
}

/// Opaque result handle: status, rows, paging state.
pub struct qim_cql_result {
    code: i32,
    message: CString,
    columns: Vec<Column>,
    rows: Vec<Vec<Cell>>,
    paging_state: Option<Vec<u8>>,
}

struct Column {
    name: CString,
    typ: i32,
}

enum Cell {
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

// ---------------------------------------------------------------------------------------------
// Helpers.

struct Failure {
    code: i32,
    message: String,
}

impl Failure {
    fn new(code: i32, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }
    fn bad_arg(message: impl Into<String>) -> Self {
        Failure::new(QIM_CQL_ERR_BAD_ARG, message)
    }
}

fn cstring_lossy(s: &str) -> CString {
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
fn guard<T>(f: impl FnOnce() -> T, on_panic: impl FnOnce(String) -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(p) => on_panic(format!("internal panic in qim_cql: {}", panic_message(&*p))),
    }
}

fn error_result(code: i32, message: impl AsRef<str>) -> Box<qim_cql_result> {
    Box::new(qim_cql_result {
        code,
        message: cstring_lossy(message.as_ref()),
        columns: Vec::new(),
        rows: Vec::new(),
        paging_state: None,
    })
}

fn failure_result(f: Failure) -> Box<qim_cql_result> {
    error_result(f.code, f.message)
}

unsafe fn set_error(err: *mut qim_cql_error, f: &Failure) {
    if err.is_null() {
        return;
    }
    let e = &mut *err;
    if !e.message.is_null() {
        drop(CString::from_raw(e.message));
    }
    e.code = f.code;
    e.message = cstring_lossy(&f.message).into_raw();
}

unsafe fn clear_error(err: *mut qim_cql_error) {
    if err.is_null() {
        return;
    }
    let e = &mut *err;
    if !e.message.is_null() {
        drop(CString::from_raw(e.message));
    }
    e.code = QIM_CQL_OK;
    e.message = std::ptr::null_mut();
}

unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::bad_arg(format!("{what} is NULL")));
    }
    CStr::from_ptr(p)
        .to_str()
        .map_err(|_| Failure::bad_arg(format!("{what} is not valid UTF-8")))
}

unsafe fn slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::bad_arg(format!("{what} is NULL with length {len}")));
    }
    Ok(std::slice::from_raw_parts(p, len))
}

/// "host" -> "host:9042", "::1" -> "[::1]:9042"; "host:port" and "[v6]:port" are kept.
fn with_default_port(host: &str) -> String {
    let h = host.trim();
    if h.starts_with('[') {
        if h.contains("]:") {
            h.to_string()
        } else {
            format!("{h}:{DEFAULT_PORT}")
        }
    } else {
        match h.matches(':').count() {
            0 => format!("{h}:{DEFAULT_PORT}"),
            1 => h.to_string(),
            _ => format!("[{h}]:{DEFAULT_PORT}"),
        }
    }
}

fn consistency_of(code: i32) -> Result<Option<Consistency>, Failure> {
    Ok(Some(match code {
        CONSISTENCY_DEFAULT => return Ok(None),
        CONSISTENCY_ANY => Consistency::Any,
        CONSISTENCY_ONE => Consistency::One,
        CONSISTENCY_TWO => Consistency::Two,
        CONSISTENCY_THREE => Consistency::Three,
        CONSISTENCY_QUORUM => Consistency::Quorum,
        CONSISTENCY_ALL => Consistency::All,
        CONSISTENCY_LOCAL_QUORUM => Consistency::LocalQuorum,
        CONSISTENCY_EACH_QUORUM => Consistency::EachQuorum,
        CONSISTENCY_LOCAL_ONE => Consistency::LocalOne,
        CONSISTENCY_SERIAL => Consistency::Serial,
        CONSISTENCY_LOCAL_SERIAL => Consistency::LocalSerial,
        other => return Err(Failure::bad_arg(format!("unknown consistency code {other}"))),
    }))
}

fn serial_consistency_of(code: i32) -> Result<Option<SerialConsistency>, Failure> {
    match code {
        CONSISTENCY_DEFAULT => Ok(None),
        CONSISTENCY_SERIAL => Ok(Some(SerialConsistency::Serial)),
        CONSISTENCY_LOCAL_SERIAL => Ok(Some(SerialConsistency::LocalSerial)),
        other => Err(Failure::bad_arg(format!(
            "serial consistency must be DEFAULT, SERIAL or LOCAL_SERIAL, got code {other}"
        ))),
    }
}

// ---------------------------------------------------------------------------------------------
// Error classification.

fn code_of_db_error(e: &DbError) -> i32 {
    match e {
        DbError::SyntaxError
        | DbError::Invalid
        | DbError::AlreadyExists { .. }
        | DbError::ConfigError
        | DbError::FunctionFailure { .. } => QIM_CQL_ERR_INVALID,
        DbError::Unavailable { .. } => QIM_CQL_ERR_UNAVAILABLE,
        DbError::ReadTimeout { .. } => QIM_CQL_ERR_READ_TIMEOUT,
        DbError::WriteTimeout { .. } => QIM_CQL_ERR_WRITE_TIMEOUT,
        DbError::Overloaded | DbError::RateLimitReached { .. } => QIM_CQL_ERR_OVERLOADED,
        _ => QIM_CQL_ERR_OTHER,
    }
}

fn code_of_attempt_error(e: &RequestAttemptError) -> i32 {
    match e {
        RequestAttemptError::DbError(db, _) => code_of_db_error(db),
        RequestAttemptError::SerializationError(_) | RequestAttemptError::CqlRequestSerialization(_) => {
            QIM_CQL_ERR_INVALID
        }
        RequestAttemptError::BrokenConnectionError(_) | RequestAttemptError::UnableToAllocStreamId => {
            QIM_CQL_ERR_CONNECT
        }
        _ => QIM_CQL_ERR_OTHER,
    }
}

fn code_of_prepare_error(e: &PrepareError) -> i32 {
    match e {
        PrepareError::ConnectionPoolError(_) => QIM_CQL_ERR_CONNECT,
        PrepareError::AllAttemptsFailed { first_attempt } => code_of_attempt_error(first_attempt),
        _ => QIM_CQL_ERR_OTHER,
    }
}

fn code_of_execution_error(e: &ExecutionError) -> i32 {
    match e {
        ExecutionError::BadQuery(_) => QIM_CQL_ERR_INVALID,
        ExecutionError::EmptyPlan | ExecutionError::ConnectionPoolError(_) => QIM_CQL_ERR_CONNECT,
        ExecutionError::PrepareError(p) => code_of_prepare_error(p),
        ExecutionError::LastAttemptError(a) => code_of_attempt_error(a),
        ExecutionError::RequestTimeout(_) => QIM_CQL_ERR_TIMEOUT,
        _ => QIM_CQL_ERR_OTHER,
    }
}

fn execution_failure(e: ExecutionError) -> Failure {
    Failure::new(code_of_execution_error(&e), e.to_string())
}

fn new_session_failure(e: NewSessionError) -> Failure {
    let code = match &e {
        NewSessionError::EmptyKnownNodesList | NewSessionError::IllegalConfig(_) => QIM_CQL_ERR_BAD_ARG,
        _ => QIM_CQL_ERR_CONNECT,
    };
    Failure::new(code, format!("cannot connect: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Bound values.

#[derive(Debug, Clone)]
enum Value {
    Null,
    Unset,
    BigInt(i64),
    Int(i32),
    SmallInt(i16),
    Bool(bool),
    Text(String),
    Blob(Vec<u8>),
    ListBigInt(Vec<i64>),
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
        }
    }
}

unsafe fn convert_values(values: *const qim_cql_value, n: usize) -> Result<Vec<Value>, Failure> {
    let raw = slice(values, n, "values")?;
    let mut out = Vec::with_capacity(raw.len());
    for (i, v) in raw.iter().enumerate() {
        out.push(match v.kind {
            VALUE_NULL => Value::Null,
            VALUE_UNSET => Value::Unset,
            VALUE_BIGINT => Value::BigInt(v.i64_),
            VALUE_INT => Value::Int(
                i32::try_from(v.i64_)
                    .map_err(|_| Failure::bad_arg(format!("value {i}: {} out of int range", v.i64_)))?,
            ),
            VALUE_SMALLINT => Value::SmallInt(
                i16::try_from(v.i64_)
                    .map_err(|_| Failure::bad_arg(format!("value {i}: {} out of smallint range", v.i64_)))?,
            ),
            VALUE_BOOLEAN => Value::Bool(v.i64_ != 0),
            VALUE_TEXT => {
                let bytes = slice(v.ptr as *const u8, v.len, "text value")?;
                Value::Text(
                    std::str::from_utf8(bytes)
                        .map_err(|_| Failure::bad_arg(format!("value {i}: text is not valid UTF-8")))?
                        .to_owned(),
                )
            }
            VALUE_BLOB => Value::Blob(slice(v.ptr as *const u8, v.len, "blob value")?.to_vec()),
            VALUE_LIST_BIGINT => Value::ListBigInt(slice(v.ptr as *const i64, v.len, "list value")?.to_vec()),
            other => return Err(Failure::bad_arg(format!("value {i}: unknown kind {other}"))),
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Statements and options.

struct Options {
    consistency: Option<Consistency>,
    serial_consistency: Option<SerialConsistency>,
    timestamp: Option<i64>,
    page_size: i32,
    max_rows: i64,
    paging_state: Option<Vec<u8>>,
    timeout: Option<Duration>,
    idempotent: bool,
}

unsafe fn convert_options(opts: *const qim_cql_exec_opts) -> Result<Options, Failure> {
    if opts.is_null() {
        return Ok(Options {
            consistency: None,
            serial_consistency: None,
            timestamp: None,
            page_size: 0,
            max_rows: 0,
            paging_state: None,
            timeout: None,
            idempotent: false,
        });
    }
    let o = &*opts;
    let paging = slice(o.paging_state, o.paging_state_len, "paging_state")?;
    if !paging.is_empty() && o.page_size <= 0 {
        return Err(Failure::bad_arg("paging_state given without a positive page_size"));
    }
    Ok(Options {
        consistency: consistency_of(o.consistency)?,
        serial_consistency: serial_consistency_of(o.serial_consistency)?,
        timestamp: if o.timestamp_us < 0 { None } else { Some(o.timestamp_us) },
        page_size: o.page_size,
        max_rows: o.max_rows,
        paging_state: if paging.is_empty() { None } else { Some(paging.to_vec()) },
        timeout: if o.timeout_ms == 0 {
            None
        } else {
            Some(Duration::from_millis(u64::from(o.timeout_ms)))
        },
        idempotent: o.idempotent != 0,
    })
}

enum Stmt {
    Prepared(PreparedStatement),
    Simple(Statement),
}

macro_rules! apply_common {
    ($s:expr, $o:expr) => {{
        if let Some(c) = $o.consistency {
            $s.set_consistency(c);
        }
        if $o.serial_consistency.is_some() {
            $s.set_serial_consistency($o.serial_consistency);
        }
        $s.set_timestamp($o.timestamp);
        if $o.timeout.is_some() {
            $s.set_request_timeout($o.timeout);
        }
        $s.set_is_idempotent($o.idempotent);
    }};
}

impl Stmt {
    fn apply(&mut self, o: &Options) {
        match self {
            Stmt::Prepared(s) => apply_common!(s, o),
            Stmt::Simple(s) => apply_common!(s, o),
        }
    }
    fn set_page_size(&mut self, n: i32) {
        match self {
            Stmt::Prepared(s) => s.set_page_size(n),
            Stmt::Simple(s) => s.set_page_size(n),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Results.

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

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 + bytes.len() * 2);
    s.push_str("0x");
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn uuid_text(b: &[u8; 16]) -> String {
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// CQL-like text of a value (used for types the typed getters do not cover, and inside collections).
fn display_value(v: &CqlValue) -> String {
    let join = |items: &mut dyn Iterator<Item = String>| items.collect::<Vec<_>>().join(", ");
    match v {
        CqlValue::Text(s) | CqlValue::Ascii(s) => format!("'{}'", s.replace('\'', "''")),
        CqlValue::Boolean(b) => b.to_string(),
        CqlValue::BigInt(x) => x.to_string(),
        CqlValue::Int(x) => x.to_string(),
        CqlValue::SmallInt(x) => x.to_string(),
        CqlValue::TinyInt(x) => x.to_string(),
        CqlValue::Counter(c) => c.0.to_string(),
        CqlValue::Timestamp(t) => t.0.to_string(),
        CqlValue::Double(x) => x.to_string(),
        CqlValue::Float(x) => x.to_string(),
        CqlValue::Inet(ip) => ip.to_string(),
        CqlValue::Blob(b) => hex(b),
        CqlValue::Uuid(u) => uuid_text(u.as_bytes()),
        CqlValue::Timeuuid(u) => uuid_text(u.as_bytes()),
        CqlValue::Empty => String::new(),
        CqlValue::List(items) | CqlValue::Vector(items) => format!("[{}]", join(&mut items.iter().map(display_value))),
        CqlValue::Set(items) => format!("{{{}}}", join(&mut items.iter().map(display_value))),
        CqlValue::Map(entries) => format!(
            "{{{}}}",
            join(
                &mut entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", display_value(k), display_value(v)))
            )
        ),
        CqlValue::Tuple(items) => format!(
            "({})",
            join(
                &mut items
                    .iter()
                    .map(|i| i.as_ref().map_or_else(|| "null".to_string(), display_value))
            )
        ),
        other => format!("{other:?}"),
    }
}

/// Appends the rows of one response to `acc`, taking the column list from the first response.
fn absorb(acc: &mut qim_cql_result, qr: QueryResult) -> Result<(), Failure> {
    if !qr.is_rows() {
        return Ok(());
    }
    let rows = qr
        .into_rows_result()
        .map_err(|e| Failure::new(QIM_CQL_ERR_OTHER, format!("cannot read rows: {e}")))?;
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
    let iter = rows
        .rows::<Row>()
        .map_err(|e| Failure::new(QIM_CQL_ERR_OTHER, format!("cannot read rows: {e}")))?;
    for r in iter {
        let r = r.map_err(|e| Failure::new(QIM_CQL_ERR_OTHER, format!("cannot decode a row: {e}")))?;
        acc.rows.push(r.columns.into_iter().map(cell_of).collect());
    }
    Ok(())
}

fn empty_ok() -> qim_cql_result {
    qim_cql_result {
        code: QIM_CQL_OK,
        message: CString::default(),
        columns: Vec::new(),
        rows: Vec::new(),
        paging_state: None,
    }
}

// ---------------------------------------------------------------------------------------------
// The requests themselves (async; run by block_on or by a spawned task).

async fn run_statement(
    session: Arc<Session>,
    mut stmt: Stmt,
    values: Vec<Value>,
    o: Options,
) -> Result<qim_cql_result, Failure> {
    stmt.apply(&o);
    let mut acc = empty_ok();
    if o.page_size <= 0 {
        let qr = match &stmt {
            Stmt::Prepared(p) => session.execute_unpaged(p, &values).await,
            Stmt::Simple(s) => session.query_unpaged(s.clone(), &values).await,
        }
        .map_err(execution_failure)?;
        absorb(&mut acc, qr)?;
        return Ok(acc);
    }
    let mut state = match &o.paging_state {
        Some(b) => PagingState::new_from_raw_bytes(b.clone()),
        None => PagingState::start(),
    };
    let mut collected: i64 = 0;
    loop {
        let want = if o.max_rows > 0 {
            i64::from(o.page_size).min(o.max_rows - collected) as i32
        } else {
            o.page_size
        };
        stmt.set_page_size(want.max(1));
        let (qr, next) = match &stmt {
            Stmt::Prepared(p) => session.execute_single_page(p, &values, state).await,
            Stmt::Simple(s) => session.query_single_page(s.clone(), &values, state).await,
        }
        .map_err(execution_failure)?;
        let before = acc.rows.len();
        absorb(&mut acc, qr)?;
        collected += (acc.rows.len() - before) as i64;
        match next {
            PagingStateResponse::NoMorePages => {
                acc.paging_state = None;
                break;
            }
            PagingStateResponse::HasMorePages { state: s } => {
                acc.paging_state = Some(s.as_bytes_slice().map(|b| b.to_vec()).unwrap_or_default());
                state = s;
            }
        }
        if o.max_rows == 0 || (o.max_rows > 0 && collected >= o.max_rows) {
            break;
        }
    }
    Ok(acc)
}

async fn run_batch(session: Arc<Session>, batch: Batch, values: Vec<Vec<Value>>) -> Result<qim_cql_result, Failure> {
    let qr = session.batch(&batch, &values).await.map_err(execution_failure)?;
    let mut acc = empty_ok();
    absorb(&mut acc, qr)?;
    Ok(acc)
}

fn into_result(r: Result<qim_cql_result, Failure>) -> Box<qim_cql_result> {
    match r {
        Ok(v) => Box::new(v),
        Err(f) => failure_result(f),
    }
}

// ---------------------------------------------------------------------------------------------
// Sessions.

impl qim_cql_session {
    fn parts(&self) -> Result<(&Runtime, Arc<Session>), Failure> {
        match (&self.runtime, &self.session) {
            (Some(rt), Some(s)) => Ok((rt, s.clone())),
            _ => Err(Failure::new(QIM_CQL_ERR_CLOSED, "session is closed")),
        }
    }
}

unsafe fn session_ref<'a>(s: *mut qim_cql_session) -> Result<&'a qim_cql_session, Failure> {
    if s.is_null() {
        return Err(Failure::bad_arg("session is NULL"));
    }
    Ok(&*s)
}

fn not_inside_runtime() -> Result<(), Failure> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Failure::bad_arg(
            "blocking qim_cql call from a runtime thread (e.g. inside a completion callback); use the async variant",
        ));
    }
    Ok(())
}

/// Runs `fut` to completion on the caller's thread.
fn block<F>(rt: &Runtime, fut: F) -> Box<qim_cql_result>
where
    F: std::future::Future<Output = Result<qim_cql_result, Failure>>,
{
    if let Err(f) = not_inside_runtime() {
        return failure_result(f);
    }
    into_result(rt.block_on(fut))
}

struct SendPtr(*mut c_void);
unsafe impl Send for SendPtr {}

/// Calls the user's callback exactly once: with the task's result, or, if the task is dropped
/// before finishing (session closed, or a panic), with an error result.
struct Completion {
    cb: unsafe extern "C" fn(*mut c_void, *mut qim_cql_result),
    user_data: SendPtr,
    closing: Arc<AtomicBool>,
    fired: bool,
}

impl Completion {
    fn fire(&mut self, r: Box<qim_cql_result>) {
        if self.fired {
            return;
        }
        self.fired = true;
        // A request cut short by close (its connection torn down) reports CLOSED, whatever the driver said.
        let r = if r.code != QIM_CQL_OK && r.code != QIM_CQL_ERR_CLOSED && self.closing.load(Ordering::SeqCst) {
            error_result(
                QIM_CQL_ERR_CLOSED,
                format!(
                    "session closed before the request completed ({})",
                    r.message.to_string_lossy()
                ),
            )
        } else {
            r
        };
        // The callback is C/C++ code declared not to unwind; it must not throw.
        unsafe { (self.cb)(self.user_data.0, Box::into_raw(r)) };
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        if !self.fired {
            let r = if std::thread::panicking() {
                error_result(QIM_CQL_ERR_OTHER, "internal panic in qim_cql while running the request")
            } else {
                error_result(QIM_CQL_ERR_CLOSED, "session closed before the request completed")
            };
            self.fire(r);
        }
    }
}

fn spawn<F>(
    s: &qim_cql_session,
    rt: &Runtime,
    fut: F,
    cb: unsafe extern "C" fn(*mut c_void, *mut qim_cql_result),
    user_data: *mut c_void,
) where
    F: std::future::Future<Output = Result<qim_cql_result, Failure>> + Send + 'static,
{
    let mut done = Completion {
        cb,
        user_data: SendPtr(user_data),
        closing: s.closing.clone(),
        fired: false,
    };
    rt.spawn(async move {
        let r = fut.await;
        done.fire(into_result(r));
    });
}

#[no_mangle]
pub extern "C" fn qim_cql_version() -> *const c_char {
    static V: &[u8] = concat!("qim_cql ", env!("CARGO_PKG_VERSION"), " (scylla 1.x)\0").as_bytes();
    V.as_ptr() as *const c_char
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_error_clear(err: *mut qim_cql_error) {
    guard(|| clear_error(err), |_| ())
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_exec_opts_init(opts: *mut qim_cql_exec_opts) {
    if opts.is_null() {
        return;
    }
    *opts = qim_cql_exec_opts {
        consistency: CONSISTENCY_DEFAULT,
        serial_consistency: CONSISTENCY_DEFAULT,
        timestamp_us: -1,
        page_size: 0,
        max_rows: 0,
        paging_state: std::ptr::null(),
        paging_state_len: 0,
        timeout_ms: 0,
        idempotent: 0,
    };
}

unsafe fn connect_impl(
    hosts: *const *const c_char,
    n_hosts: usize,
    local_dc: *const c_char,
    request_timeout_ms: u32,
) -> Result<Box<qim_cql_session>, Failure> {
    let raw_hosts = slice(hosts, n_hosts, "hosts")?;
    if raw_hosts.is_empty() {
        return Err(Failure::bad_arg("no contact points given"));
    }
    let mut nodes = Vec::with_capacity(raw_hosts.len());
    for (i, h) in raw_hosts.iter().enumerate() {
        let s = c_str(*h, &format!("hosts[{i}]"))?;
        if s.trim().is_empty() {
            return Err(Failure::bad_arg(format!("hosts[{i}] is empty")));
        }
        nodes.push(with_default_port(s));
    }
    let dc = if local_dc.is_null() {
        None
    } else {
        Some(c_str(local_dc, "local_dc")?.to_owned())
    }
    .filter(|d| !d.is_empty());
    if request_timeout_ms == 0 {
        return Err(Failure::bad_arg("request_timeout_ms must be positive"));
    }
    let timeout = Duration::from_millis(u64::from(request_timeout_ms));

    not_inside_runtime()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .thread_name("qim-cql")
        .enable_all()
        .build()
        .map_err(|e| Failure::new(QIM_CQL_ERR_OTHER, format!("cannot start the tokio runtime: {e}")))?;

    let mut policy = DefaultPolicy::builder().token_aware(true);
    if let Some(dc) = &dc {
        policy = policy.prefer_datacenter(dc.clone()).permit_dc_failover(false);
    }
    let profile = ExecutionProfile::builder()
        .request_timeout(Some(timeout))
        .consistency(Consistency::LocalQuorum)
        .load_balancing_policy(policy.build())
        .build();
    let builder = SessionBuilder::new()
        .known_nodes(&nodes)
        .connection_timeout(timeout.min(Duration::from_secs(5)).max(Duration::from_millis(500)))
        .default_execution_profile_handle(profile.into_handle());
    let built = runtime.block_on(async {
        // Bound the whole bootstrap (control connection, metadata, pools), not only one socket.
        match tokio::time::timeout(timeout.max(Duration::from_secs(10)), builder.build()).await {
            Ok(r) => r.map_err(new_session_failure),
            Err(_) => Err(Failure::new(
                QIM_CQL_ERR_CONNECT,
                format!("cannot connect to {}: session setup timed out", nodes.join(",")),
            )),
        }
    });
    match built {
        Ok(session) => Ok(Box::new(qim_cql_session {
            runtime: Some(runtime),
            session: Some(Arc::new(session)),
            closing: Arc::new(AtomicBool::new(false)),
        })),
        Err(f) => {
            runtime.shutdown_timeout(Duration::from_secs(2));
            Err(f)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_connect(
    hosts: *const *const c_char,
    n_hosts: usize,
    local_dc: *const c_char,
    request_timeout_ms: u32,
    out: *mut *mut qim_cql_session,
    err: *mut qim_cql_error,
) -> i32 {
    let r = guard(
        || {
            if out.is_null() {
                return Err(Failure::bad_arg("out is NULL"));
            }
            connect_impl(hosts, n_hosts, local_dc, request_timeout_ms)
        },
        |m| Err(Failure::new(QIM_CQL_ERR_OTHER, m)),
    );
    match r {
        Ok(s) => {
            *out = Box::into_raw(s);
            clear_error(err);
            QIM_CQL_OK
        }
        Err(f) => {
            if !out.is_null() {
                *out = std::ptr::null_mut();
            }
            set_error(err, &f);
            f.code
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_session_close(session: *mut qim_cql_session) {
    if session.is_null() {
        return;
    }
    guard(
        || {
            let mut s = Box::from_raw(session);
            s.closing.store(true, Ordering::SeqCst);
            let rt = s.runtime.take();
            let sess = s.session.take();
            if let Some(rt) = rt {
                {
                    // Drop our reference inside the runtime's context; tasks may still hold others.
                    let _enter = rt.enter();
                    drop(sess);
                }
                if tokio::runtime::Handle::try_current().is_ok() {
                    // Called from a runtime thread (a callback): cannot wait here.
                    rt.shutdown_background();
                } else {
                    // Cancels in-flight tasks (their callbacks get QIM_CQL_ERR_CLOSED) and waits.
                    rt.shutdown_timeout(Duration::from_secs(10));
                }
            }
        },
        |_| (),
    )
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_prepare(
    session: *mut qim_cql_session,
    cql: *const c_char,
    out: *mut *mut qim_cql_prepared,
    err: *mut qim_cql_error,
) -> i32 {
    let r = guard(
        || -> Result<Box<qim_cql_prepared>, Failure> {
            if out.is_null() {
                return Err(Failure::bad_arg("out is NULL"));
            }
            let s = session_ref(session)?;
            let text = c_str(cql, "cql")?.to_owned();
            let (rt, sess) = s.parts()?;
            not_inside_runtime()?;
            let prepared = rt
                .block_on(sess.prepare(text))
                .map_err(|e| Failure::new(code_of_prepare_error(&e), e.to_string()))?;
            Ok(Box::new(qim_cql_prepared { statement: prepared }))
        },
        |m| Err(Failure::new(QIM_CQL_ERR_OTHER, m)),
    );
    match r {
        Ok(p) => {
            *out = Box::into_raw(p);
            clear_error(err);
            QIM_CQL_OK
        }
        Err(f) => {
            if !out.is_null() {
                *out = std::ptr::null_mut();
            }
            set_error(err, &f);
            f.code
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_prepared_param_count(prepared: *const qim_cql_prepared) -> usize {
    if prepared.is_null() {
        return 0;
    }
    guard(|| (*prepared).statement.get_variable_col_specs().len(), |_| 0)
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_prepared_free(prepared: *mut qim_cql_prepared) {
    if prepared.is_null() {
        return;
    }
    guard(|| drop(Box::from_raw(prepared)), |_| ())
}

// ---- execute / query / batch --------------------------------------------------------------------

unsafe fn prepare_execute(
    session: *mut qim_cql_session,
    prepared: *const qim_cql_prepared,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
) -> Result<
    (
        &'static qim_cql_session,
        impl std::future::Future<Output = Result<qim_cql_result, Failure>> + Send + 'static,
    ),
    Failure,
> {
    let s: &'static qim_cql_session = session_ref(session)?;
    if prepared.is_null() {
        return Err(Failure::bad_arg("prepared is NULL"));
    }
    let stmt = Stmt::Prepared((*prepared).statement.clone());
    let vals = convert_values(values, n_values)?;
    let o = convert_options(opts)?;
    let (_, sess) = s.parts()?;
    Ok((s, run_statement(sess, stmt, vals, o)))
}

unsafe fn prepare_query(
    session: *mut qim_cql_session,
    cql: *const c_char,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
) -> Result<
    (
        &'static qim_cql_session,
        impl std::future::Future<Output = Result<qim_cql_result, Failure>> + Send + 'static,
    ),
    Failure,
> {
    let s: &'static qim_cql_session = session_ref(session)?;
    let stmt = Stmt::Simple(Statement::new(c_str(cql, "cql")?.to_owned()));
    let vals = convert_values(values, n_values)?;
    let o = convert_options(opts)?;
    let (_, sess) = s.parts()?;
    Ok((s, run_statement(sess, stmt, vals, o)))
}

unsafe fn prepare_batch(
    session: *mut qim_cql_session,
    batch_type: i32,
    items: *const qim_cql_batch_item,
    n_items: usize,
    opts: *const qim_cql_exec_opts,
) -> Result<
    (
        &'static qim_cql_session,
        impl std::future::Future<Output = Result<qim_cql_result, Failure>> + Send + 'static,
    ),
    Failure,
> {
    let s: &'static qim_cql_session = session_ref(session)?;
    let typ = match batch_type {
        BATCH_LOGGED => BatchType::Logged,
        BATCH_UNLOGGED => BatchType::Unlogged,
        other => return Err(Failure::bad_arg(format!("unknown batch type {other}"))),
    };
    let raw = slice(items, n_items, "batch items")?;
    if raw.is_empty() {
        return Err(Failure::bad_arg("empty batch"));
    }
    let mut batch = Batch::new(typ);
    let mut values = Vec::with_capacity(raw.len());
    for (i, it) in raw.iter().enumerate() {
        if it.prepared.is_null() {
            return Err(Failure::bad_arg(format!("batch item {i}: prepared is NULL")));
        }
        batch.append_statement((*it.prepared).statement.clone());
        values.push(
            convert_values(it.values, it.n_values)
                .map_err(|f| Failure::new(f.code, format!("batch item {i}: {}", f.message)))?,
        );
    }
    let o = convert_options(opts)?;
    if o.page_size > 0 || o.paging_state.is_some() {
        return Err(Failure::bad_arg("paging options do not apply to a batch"));
    }
    apply_common!(batch, o);
    let (_, sess) = s.parts()?;
    Ok((s, run_batch(sess, batch, values)))
}

fn run_blocking<F>(prep: Result<(&'static qim_cql_session, F), Failure>) -> *mut qim_cql_result
where
    F: std::future::Future<Output = Result<qim_cql_result, Failure>>,
{
    let r = match prep {
        Err(f) => failure_result(f),
        Ok((s, fut)) => match s.parts() {
            Ok((rt, _)) => block(rt, fut),
            Err(f) => failure_result(f),
        },
    };
    Box::into_raw(r)
}

unsafe fn run_async<F>(
    prep: Result<(&'static qim_cql_session, F), Failure>,
    cb: qim_cql_callback,
    user_data: *mut c_void,
    err: *mut qim_cql_error,
) -> i32
where
    F: std::future::Future<Output = Result<qim_cql_result, Failure>> + Send + 'static,
{
    let started = (|| {
        let cb = cb.ok_or_else(|| Failure::bad_arg("callback is NULL"))?;
        let (s, fut) = prep?;
        let (rt, _) = s.parts()?;
        spawn(s, rt, fut, cb, user_data);
        Ok(())
    })();
    match started {
        Ok(()) => {
            clear_error(err);
            QIM_CQL_OK
        }
        Err(f) => {
            set_error(err, &f);
            f.code
        }
    }
}

fn panic_result(m: String) -> *mut qim_cql_result {
    Box::into_raw(error_result(QIM_CQL_ERR_OTHER, m))
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_execute(
    session: *mut qim_cql_session,
    prepared: *const qim_cql_prepared,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
) -> *mut qim_cql_result {
    guard(
        || run_blocking(prepare_execute(session, prepared, values, n_values, opts)),
        panic_result,
    )
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_execute_async(
    session: *mut qim_cql_session,
    prepared: *const qim_cql_prepared,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
    cb: qim_cql_callback,
    user_data: *mut c_void,
    err: *mut qim_cql_error,
) -> i32 {
    guard(
        || {
            run_async(
                prepare_execute(session, prepared, values, n_values, opts),
                cb,
                user_data,
                err,
            )
        },
        |_| QIM_CQL_ERR_OTHER,
    )
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_query(
    session: *mut qim_cql_session,
    cql: *const c_char,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
) -> *mut qim_cql_result {
    guard(
        || run_blocking(prepare_query(session, cql, values, n_values, opts)),
        panic_result,
    )
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_query_async(
    session: *mut qim_cql_session,
    cql: *const c_char,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
    cb: qim_cql_callback,
    user_data: *mut c_void,
    err: *mut qim_cql_error,
) -> i32 {
    guard(
        || run_async(prepare_query(session, cql, values, n_values, opts), cb, user_data, err),
        |_| QIM_CQL_ERR_OTHER,
    )
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_batch(
    session: *mut qim_cql_session,
    batch_type: i32,
    items: *const qim_cql_batch_item,
    n_items: usize,
    opts: *const qim_cql_exec_opts,
) -> *mut qim_cql_result {
    guard(
        || run_blocking(prepare_batch(session, batch_type, items, n_items, opts)),
        panic_result,
    )
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_batch_async(
    session: *mut qim_cql_session,
    batch_type: i32,
    items: *const qim_cql_batch_item,
    n_items: usize,
    opts: *const qim_cql_exec_opts,
    cb: qim_cql_callback,
    user_data: *mut c_void,
    err: *mut qim_cql_error,
) -> i32 {
    guard(
        || {
            run_async(
                prepare_batch(session, batch_type, items, n_items, opts),
                cb,
                user_data,
                err,
            )
        },
        |_| QIM_CQL_ERR_OTHER,
    )
}

// ---- result accessors ---------------------------------------------------------------------------

unsafe fn cell<'a>(r: *const qim_cql_result, row: usize, col: usize) -> Result<&'a Cell, i32> {
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
    if len.is_null() {
        return QIM_CQL_ERR_BAD_ARG;
    }
    getter(r, row, col, out, |c| match c {
        Cell::Text(v) => {
            *len = v.len() - 1;
            Some(v.as_ptr() as *const c_char)
        }
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
    if len.is_null() {
        return QIM_CQL_ERR_BAD_ARG;
    }
    getter(r, row, col, out, |c| match c {
        Cell::Blob(v) => {
            *len = v.len();
            Some(v.as_ptr())
        }
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
    if len.is_null() {
        return QIM_CQL_ERR_BAD_ARG;
    }
    getter(r, row, col, out, |c| match c {
        Cell::ListI64(v) => {
            *len = v.len();
            Some(v.as_ptr())
        }
        _ => None,
    })
}

fn render_cell(c: &Cell) -> String {
    match c {
        Cell::Null => "null".to_string(),
        Cell::I64(v) => v.to_string(),
        Cell::I32(v) => v.to_string(),
        Cell::I16(v) => v.to_string(),
        Cell::I8(v) => v.to_string(),
        Cell::Bool(v) => v.to_string(),
        Cell::Text(v) => String::from_utf8_lossy(&v[..v.len() - 1]).into_owned(),
        Cell::Blob(v) => hex(v),
        Cell::ListI64(v) => {
            let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            format!("[{}]", items.join(", "))
        }
        Cell::Other(s) => s.clone(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_render(
    r: *const qim_cql_result,
    row: usize,
    col: usize,
    buf: *mut c_char,
    cap: usize,
) -> usize {
    guard(
        || {
            let text = match cell(r, row, col) {
                Ok(c) => {
                    // UUID columns read back as 16-byte blobs; render them the usual way.
                    let typ = r
                        .as_ref()
                        .and_then(|r| r.columns.get(col))
                        .map_or(TYPE_OTHER, |c| c.typ);
                    match (c, typ) {
                        (Cell::Blob(b), TYPE_UUID | TYPE_TIMEUUID) if b.len() == 16 => {
                            let mut a = [0u8; 16];
                            a.copy_from_slice(b);
                            uuid_text(&a)
                        }
                        _ => render_cell(c),
                    }
                }
                Err(_) => String::new(),
            };
            let bytes = text.as_bytes();
            if !buf.is_null() && cap > 0 {
                let n = bytes.len().min(cap - 1);
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf as *mut u8, n);
                *buf.add(n) = 0;
            }
            bytes.len()
        },
        |_| 0,
    )
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
    match &(*r).paging_state {
        Some(p) => {
            if !out.is_null() {
                *out = p.as_ptr();
            }
            if !len.is_null() {
                *len = p.len();
            }
            1
        }
        None => {
            if !out.is_null() {
                *out = std::ptr::null();
            }
            if !len.is_null() {
                *len = 0;
            }
            0
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_result_free(r: *mut qim_cql_result) {
    if r.is_null() {
        return;
    }
    guard(|| drop(Box::from_raw(r)), |_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_port() {
        assert_eq!(with_default_port("127.0.0.1"), "127.0.0.1:9042");
        assert_eq!(with_default_port("127.0.0.1:19042"), "127.0.0.1:19042");
        assert_eq!(with_default_port("::1"), "[::1]:9042");
        assert_eq!(with_default_port("[::1]"), "[::1]:9042");
        assert_eq!(with_default_port("[::1]:9043"), "[::1]:9043");
        assert_eq!(with_default_port("db.local"), "db.local:9042");
    }
}
