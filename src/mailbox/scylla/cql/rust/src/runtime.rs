//! How a C call runs on a session's tokio runtime. Each session owns one multi-threaded runtime
//! (`WORKER_THREADS` workers). A blocking call runs its request with `Runtime::block_on` on the
//! caller's thread (refused on a runtime thread, where it would deadlock); an async call spawns a task
//! whose `Completion` calls the caller's callback exactly once, even when the task is dropped by close
//! or a panic, and reports a request cut short by close as QIM_CQL_ERR_CLOSED.

use std::ffi::c_void;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::runtime::Runtime;

use crate::codes::*;
use crate::error::{qim_cql_error, report, Failure};
use crate::ffi::guard;
use crate::result::{error_result, failure_result, into_result, qim_cql_result};
use crate::session::qim_cql_session;

const WORKER_THREADS: usize = 2;

pub type qim_cql_callback = Option<unsafe extern "C" fn(user_data: *mut c_void, result: *mut qim_cql_result)>;

/// A new runtime for one session.
pub(crate) fn new_runtime() -> Result<Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .thread_name("qim-cql")
        .enable_all()
        .build()
        .map_err(|e| Failure::new(QIM_CQL_ERR_OTHER, format!("cannot start the tokio runtime: {e}")))
}

/// `BAD_ARG` when called on a runtime thread (e.g. from a completion callback), where blocking would
/// deadlock the runtime.
pub(crate) fn not_inside_runtime() -> Result<(), Failure> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Failure::bad_arg(
            "blocking qim_cql call from a runtime thread (e.g. inside a completion callback); use the async variant",
        ));
    }
    Ok(())
}

/// Runs `fut` to completion on the caller's thread.
fn block(rt: &Runtime, fut: impl Request) -> Box<qim_cql_result> {
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

fn spawn(
    s: &qim_cql_session,
    rt: &Runtime,
    fut: impl Request,
    cb: unsafe extern "C" fn(*mut c_void, *mut qim_cql_result),
    user_data: *mut c_void,
) {
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

/// A request ready to run: the future that produces the call's result.
pub(crate) trait Request: Future<Output = Result<qim_cql_result, Failure>> + Send + 'static {}
impl<F: Future<Output = Result<qim_cql_result, Failure>> + Send + 'static> Request for F {}

/// What the `prepare_*` functions of `execute` build: the session and the request to run on it, or
/// why there is nothing to run (a bad argument, a closed session).
pub(crate) type ReadyRequest<F> = Result<(&'static qim_cql_session, F), Failure>;

/// A blocking entry point: builds the request and runs it on the caller's thread. The result handle
/// is never NULL; a panic while building or running it becomes an OTHER result.
pub(crate) fn run_blocking<F: Request>(build: impl FnOnce() -> ReadyRequest<F>) -> *mut qim_cql_result {
    guard(
        || {
            let r = match build() {
                Err(f) => failure_result(f),
                Ok((s, fut)) => match s.parts() {
                    Ok((rt, _)) => block(rt, fut),
                    Err(f) => failure_result(f),
                },
            };
            Box::into_raw(r)
        },
        |m| Box::into_raw(error_result(QIM_CQL_ERR_OTHER, m)),
    )
}

/// An async entry point: builds the request and spawns it on the runtime. Returns OK once the
/// callback is sure to be called, or the code (also stored in `*err`) of why nothing was started; a
/// panic is OTHER.
pub(crate) unsafe fn run_async<F: Request>(
    build: impl FnOnce() -> ReadyRequest<F>,
    cb: qim_cql_callback,
    user_data: *mut c_void,
    err: *mut qim_cql_error,
) -> i32 {
    guard(
        || {
            let prep = build();
            let started = (|| {
                let cb = cb.ok_or_else(|| Failure::bad_arg("callback is NULL"))?;
                let (s, fut) = prep?;
                let (rt, _) = s.parts()?;
                spawn(s, rt, fut, cb, user_data);
                Ok(())
            })();
            report(err, started)
        },
        |_| QIM_CQL_ERR_OTHER,
    )
}
