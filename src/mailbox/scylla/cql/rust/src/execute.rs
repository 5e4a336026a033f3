//! Execute, query and batch, blocking and async: the six exported entry points. Each checks and
//! copies its arguments into a request future (`prepare_execute`, `prepare_query`, `prepare_batch`;
//! nothing is sent if an argument is bad), then `runtime` runs that future on the caller's thread or
//! spawns it with the caller's callback.

use std::ffi::{c_char, c_void};

use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::Statement;

use crate::codes::*;
use crate::error::{qim_cql_error, Failure};
use crate::ffi::{c_str, slice};
use crate::options::{apply_common, convert_options, qim_cql_exec_opts};
use crate::prepared::qim_cql_prepared;
use crate::request::{run_batch, run_statement, Stmt};
use crate::result::qim_cql_result;
use crate::runtime::{qim_cql_callback, run_async, run_blocking, ReadyRequest, Request};
use crate::session::{qim_cql_session, session_ref};
use crate::values::{convert_values, qim_cql_value};

/// One statement of a batch.
#[repr(C)]
pub struct qim_cql_batch_item {
    pub prepared: *const qim_cql_prepared,
    pub values: *const qim_cql_value,
    pub n_values: usize,
}

/// The request of an execute or a query: `stmt` with its values and options checked and copied.
unsafe fn statement_request(
    s: &'static qim_cql_session,
    stmt: Stmt,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
) -> ReadyRequest<impl Request> {
    let vals = convert_values(values, n_values)?;
    let o = convert_options(opts)?;
    let (_, sess) = s.parts()?;
    Ok((s, run_statement(sess, stmt, vals, o)))
}

unsafe fn prepare_execute(
    session: *mut qim_cql_session,
    prepared: *const qim_cql_prepared,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
) -> ReadyRequest<impl Request> {
    let s: &'static qim_cql_session = session_ref(session)?;
    if prepared.is_null() {
        return Err(Failure::bad_arg("prepared is NULL"));
    }
    statement_request(s, Stmt::Prepared((*prepared).statement.clone()), values, n_values, opts)
}

unsafe fn prepare_query(
    session: *mut qim_cql_session,
    cql: *const c_char,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
) -> ReadyRequest<impl Request> {
    let s: &'static qim_cql_session = session_ref(session)?;
    let stmt = Stmt::Simple(Statement::new(c_str(cql, "cql")?.to_owned()));
    statement_request(s, stmt, values, n_values, opts)
}

unsafe fn prepare_batch(
    session: *mut qim_cql_session,
    batch_type: i32,
    items: *const qim_cql_batch_item,
    n_items: usize,
    opts: *const qim_cql_exec_opts,
) -> ReadyRequest<impl Request> {
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

#[no_mangle]
pub unsafe extern "C" fn qim_cql_execute(
    session: *mut qim_cql_session,
    prepared: *const qim_cql_prepared,
    values: *const qim_cql_value,
    n_values: usize,
    opts: *const qim_cql_exec_opts,
) -> *mut qim_cql_result {
    run_blocking(|| prepare_execute(session, prepared, values, n_values, opts))
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
    run_async(
        || prepare_execute(session, prepared, values, n_values, opts),
        cb,
        user_data,
        err,
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
    run_blocking(|| prepare_query(session, cql, values, n_values, opts))
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
    run_async(
        || prepare_query(session, cql, values, n_values, opts),
        cb,
        user_data,
        err,
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
    run_blocking(|| prepare_batch(session, batch_type, items, n_items, opts))
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
    run_async(
        || prepare_batch(session, batch_type, items, n_items, opts),
        cb,
        user_data,
        err,
    )
}
