//! Per-call options: the C `qim_cql_exec_opts` (and `qim_cql_exec_opts_init`, its defaults), checked
//! into an owned `Options`, and applied to a statement or batch (consistency, serial consistency,
//! client timestamp, timeout, idempotence). The paging options are carried here too; `request` drives them.

use std::time::Duration;

use scylla::statement::{Consistency, SerialConsistency};

use crate::codes::*;
use crate::error::Failure;
use crate::ffi::slice;

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

/// The options of one call, owned (the paging state is copied out of the caller's buffer).
pub(crate) struct Options {
    pub(crate) consistency: Option<Consistency>,
    pub(crate) serial_consistency: Option<SerialConsistency>,
    pub(crate) timestamp: Option<i64>,
    pub(crate) page_size: i32,
    pub(crate) max_rows: i64,
    pub(crate) paging_state: Option<Vec<u8>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) idempotent: bool,
}

/// Checks and copies `*opts`; NULL means all defaults.
pub(crate) unsafe fn convert_options(opts: *const qim_cql_exec_opts) -> Result<Options, Failure> {
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

/// Applies the non-paging options to anything with the driver's statement setters (a prepared or
/// simple statement, or a batch: they share the method names but no trait).
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
pub(crate) use apply_common;
