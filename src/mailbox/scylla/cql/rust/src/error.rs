//! Errors: the C error out-parameter (`qim_cql_error`), the crate's internal error value (`Failure`,
//! a status code with a message), and the mapping of every driver error onto the header's status
//! codes. Keeping the classification in one place is what makes "a timeout is QIM_CQL_ERR_TIMEOUT"
//! true for connect, prepare, execute, query and batch alike.

use std::ffi::{c_char, CString};

use scylla::errors::{DbError, ExecutionError, NewSessionError, PrepareError, RequestAttemptError};

use crate::codes::*;
use crate::ffi::{cstring_lossy, guard};

/// Error out-parameter of connect/prepare. `message` is owned by the struct (free with
/// `qim_cql_error_clear`).
#[repr(C)]
pub struct qim_cql_error {
    pub code: i32,
    pub message: *mut c_char,
}

/// A failed call: the status code it returns and the message it reports.
pub(crate) struct Failure {
    pub(crate) code: i32,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(code: i32, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }
    pub(crate) fn bad_arg(message: impl Into<String>) -> Self {
        Failure::new(QIM_CQL_ERR_BAD_ARG, message)
    }
}

/// Stores `code` and `message` in `*err` (if `err` is not NULL), freeing the message it held.
unsafe fn store_error(err: *mut qim_cql_error, code: i32, message: *mut c_char) {
    if err.is_null() {
        return;
    }
    let e = &mut *err;
    if !e.message.is_null() {
        drop(CString::from_raw(e.message));
    }
    e.code = code;
    e.message = message;
}

/// Stores `f` in `*err` (if `err` is not NULL), freeing the message it held.
pub(crate) unsafe fn set_error(err: *mut qim_cql_error, f: &Failure) {
    if err.is_null() {
        return;
    }
    store_error(err, f.code, cstring_lossy(&f.message).into_raw());
}

/// Resets `*err` (if `err` is not NULL) to OK with no message, freeing the message it held.
pub(crate) unsafe fn clear_error(err: *mut qim_cql_error) {
    store_error(err, QIM_CQL_OK, std::ptr::null_mut());
}

/// The status a call with an error out-parameter returns: OK with `*err` cleared, or the failure's
/// code, also stored in `*err`.
pub(crate) unsafe fn report(err: *mut qim_cql_error, r: Result<(), Failure>) -> i32 {
    match r {
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

/// The shape of connect and prepare: runs `make` under `guard` (NULL `out` is `BAD_ARG`, a panic is
/// `OTHER`), hands the new handle out through `*out` (NULL on failure) and reports through `err`.
pub(crate) unsafe fn hand_out<T>(
    out: *mut *mut T,
    err: *mut qim_cql_error,
    make: impl FnOnce() -> Result<Box<T>, Failure>,
) -> i32 {
    let r = guard(
        || {
            if out.is_null() {
                return Err(Failure::bad_arg("out is NULL"));
            }
            make()
        },
        |m| Err(Failure::new(QIM_CQL_ERR_OTHER, m)),
    );
    let r = match r {
        Ok(handle) => {
            *out = Box::into_raw(handle);
            Ok(())
        }
        Err(f) => {
            if !out.is_null() {
                *out = std::ptr::null_mut();
            }
            Err(f)
        }
    };
    report(err, r)
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_error_clear(err: *mut qim_cql_error) {
    guard(|| clear_error(err), |_| ())
}

// ---- classification of driver errors --------------------------------------------------------------

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

pub(crate) fn code_of_prepare_error(e: &PrepareError) -> i32 {
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

pub(crate) fn execution_failure(e: ExecutionError) -> Failure {
    Failure::new(code_of_execution_error(&e), e.to_string())
}

pub(crate) fn new_session_failure(e: NewSessionError) -> Failure {
    let code = match &e {
        NewSessionError::EmptyKnownNodesList | NewSessionError::IllegalConfig(_) => QIM_CQL_ERR_BAD_ARG,
        _ => QIM_CQL_ERR_CONNECT,
    };
    Failure::new(code, format!("cannot connect: {e}"))
}
