//! Prepared statements: `qim_cql_prepare` (a blocking round trip to the cluster), the parameter count
//! and `qim_cql_prepared_free`. Every execute clones the driver's statement out of the handle, so a
//! handle may be freed while calls made with it are still in flight.

use std::ffi::c_char;

use scylla::statement::prepared::PreparedStatement;

use crate::error::{code_of_prepare_error, hand_out, qim_cql_error, Failure};
use crate::ffi::{c_str, free_box, guard};
use crate::runtime::not_inside_runtime;
use crate::session::{qim_cql_session, session_ref};

/// Opaque prepared statement handle.
pub struct qim_cql_prepared {
    pub(crate) statement: PreparedStatement,
}

#[no_mangle]
pub unsafe extern "C" fn qim_cql_prepare(
    session: *mut qim_cql_session,
    cql: *const c_char,
    out: *mut *mut qim_cql_prepared,
    err: *mut qim_cql_error,
) -> i32 {
    hand_out(out, err, || {
        let s = session_ref(session)?;
        let text = c_str(cql, "cql")?.to_owned();
        let (rt, sess) = s.parts()?;
        not_inside_runtime()?;
        let prepared = rt
            .block_on(sess.prepare(text))
            .map_err(|e| Failure::new(code_of_prepare_error(&e), e.to_string()))?;
        Ok(Box::new(qim_cql_prepared { statement: prepared }))
    })
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
    free_box(prepared)
}
