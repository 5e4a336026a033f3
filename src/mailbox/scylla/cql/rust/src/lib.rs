//! qim_cql: QIM's CQL client. The `scylla` driver (1.x, on tokio) behind a small C ABI.
//!
//! The C header `../qim_cql.h` is the contract; the modules below implement it. Rules kept everywhere:
//! - every exported function catches panics (`ffi::guard`), so no unwinding crosses the FFI boundary;
//! - every handle is a `Box` turned into a raw pointer, freed only by its own `*_free`/`*_close`;
//! - strings handed to C are owned by the handle they came from (result, error) and live as long as it.
//!
//! One multi-threaded tokio runtime (2 worker threads) per session. Blocking calls run the request
//! with `Runtime::block_on` on the caller's thread; asynchronous calls spawn a task whose completion
//! calls the caller's callback exactly once, from a runtime thread.
//!
//! Layout (one concept per module; this file only declares them and re-exports the C ABI):
//! - `codes`: every number shared with the header (status codes, consistency, value kinds, types);
//! - `ffi`: panic guard, checked reading of C strings and arrays;
//! - `error`: `qim_cql_error`, the internal `Failure`, driver errors mapped onto status codes;
//! - `session`: connect, close, version; `runtime`: blocking and async execution on the session's runtime;
//! - `prepared`: prepare and its handle; `values`: bound values; `options`: per-call options;
//! - `execute`: the execute/query/batch entry points; `request`: the request futures, paging included;
//! - `result`: the result handle and row decoding; `accessors`: its getters; `render`: text of any cell.

#![allow(non_camel_case_types)]
// The safety contract of every exported function (valid handles, live pointers, lengths) is written
// once, in qim_cql.h, rather than on each function.
#![allow(clippy::missing_safety_doc)]

mod accessors;
mod codes;
mod error;
mod execute;
mod ffi;
mod options;
mod prepared;
mod render;
mod request;
mod result;
mod runtime;
mod session;
mod values;

// The C ABI, re-exported at the crate root where the single-file crate had it. The `#[no_mangle]`
// functions are exported from the archive wherever they are defined; re-exporting them keeps the
// crate's Rust-visible surface the same too.
pub use accessors::{
    qim_cql_result_code, qim_cql_result_column_count, qim_cql_result_column_index, qim_cql_result_column_name,
    qim_cql_result_column_type, qim_cql_result_free, qim_cql_result_get_blob, qim_cql_result_get_bool,
    qim_cql_result_get_i32, qim_cql_result_get_i64, qim_cql_result_get_i64_list, qim_cql_result_get_text,
    qim_cql_result_is_null, qim_cql_result_message, qim_cql_result_paging_state, qim_cql_result_row_count,
};
pub use codes::{
    QIM_CQL_ERR_BAD_ARG, QIM_CQL_ERR_CLOSED, QIM_CQL_ERR_CONNECT, QIM_CQL_ERR_INVALID, QIM_CQL_ERR_NULL,
    QIM_CQL_ERR_OTHER, QIM_CQL_ERR_OVERLOADED, QIM_CQL_ERR_READ_TIMEOUT, QIM_CQL_ERR_TIMEOUT, QIM_CQL_ERR_UNAVAILABLE,
    QIM_CQL_ERR_WRITE_TIMEOUT, QIM_CQL_OK,
};
pub use error::{qim_cql_error, qim_cql_error_clear};
pub use execute::{
    qim_cql_batch, qim_cql_batch_async, qim_cql_batch_item, qim_cql_execute, qim_cql_execute_async, qim_cql_query,
    qim_cql_query_async,
};
pub use options::{qim_cql_exec_opts, qim_cql_exec_opts_init};
pub use prepared::{qim_cql_prepare, qim_cql_prepared, qim_cql_prepared_free, qim_cql_prepared_param_count};
pub use render::qim_cql_result_render;
pub use result::qim_cql_result;
pub use runtime::qim_cql_callback;
pub use session::{qim_cql_connect, qim_cql_session, qim_cql_session_close, qim_cql_version};
pub use values::qim_cql_value;
