//! Sessions: `qim_cql_connect` (contact points, local datacenter, the session's request timeout and
//! default LOCAL_QUORUM, a bounded bootstrap) and `qim_cql_session_close`, which cancels what is in
//! flight (each callback still fires, with QIM_CQL_ERR_CLOSED) and waits for the runtime to stop.
//! Also `qim_cql_version`.

use std::ffi::c_char;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::statement::Consistency;
use tokio::runtime::Runtime;

use crate::codes::*;
use crate::error::{hand_out, new_session_failure, qim_cql_error, Failure};
use crate::ffi::{c_str, guard, slice};
use crate::runtime::{new_runtime, not_inside_runtime};

const DEFAULT_PORT: u16 = 9042;

/// Opaque session handle.
pub struct qim_cql_session {
    runtime: Option<Runtime>,
    session: Option<Arc<Session>>,
    /// Set when close starts: a request failing from then on reports QIM_CQL_ERR_CLOSED.
    pub(crate) closing: Arc<AtomicBool>,
}

impl qim_cql_session {
    /// The runtime and the driver session; `CLOSED` once close has taken them.
    pub(crate) fn parts(&self) -> Result<(&Runtime, Arc<Session>), Failure> {
        match (&self.runtime, &self.session) {
            (Some(rt), Some(s)) => Ok((rt, s.clone())),
            _ => Err(Failure::new(QIM_CQL_ERR_CLOSED, "session is closed")),
        }
    }
}

/// The session behind a handle; `BAD_ARG` for NULL.
pub(crate) unsafe fn session_ref<'a>(s: *mut qim_cql_session) -> Result<&'a qim_cql_session, Failure> {
    if s.is_null() {
        return Err(Failure::bad_arg("session is NULL"));
    }
    Ok(&*s)
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

#[no_mangle]
pub extern "C" fn qim_cql_version() -> *const c_char {
    static V: &[u8] = concat!("qim_cql ", env!("CARGO_PKG_VERSION"), " (scylla 1.x)\0").as_bytes();
    V.as_ptr() as *const c_char
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
    let runtime = new_runtime()?;

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
    hand_out(out, err, || connect_impl(hosts, n_hosts, local_dc, request_timeout_ms))
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
