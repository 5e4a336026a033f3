//! The requests themselves, as futures run by `runtime` (blocked on, or spawned): one statement,
//! unpaged (a single response) or page by page up to `max_rows` with the paging state to continue
//! from, and one batch. Each turns the responses into a `qim_cql_result`.

use std::sync::Arc;

use scylla::client::session::Session;
use scylla::response::{PagingState, PagingStateResponse};
use scylla::statement::batch::Batch;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Statement;

use crate::error::{execution_failure, Failure};
use crate::options::{apply_common, Options};
use crate::result::{absorb, empty_ok, qim_cql_result};
use crate::values::Value;

/// The statement of an execute (prepared) or a query (CQL text).
pub(crate) enum Stmt {
    Prepared(PreparedStatement),
    Simple(Statement),
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

pub(crate) async fn run_statement(
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

pub(crate) async fn run_batch(
    session: Arc<Session>,
    batch: Batch,
    values: Vec<Vec<Value>>,
) -> Result<qim_cql_result, Failure> {
    let qr = session.batch(&batch, &values).await.map_err(execution_failure)?;
    let mut acc = empty_ok();
    absorb(&mut acc, qr)?;
    Ok(acc)
}
