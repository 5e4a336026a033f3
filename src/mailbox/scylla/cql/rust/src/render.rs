//! Text of any cell: `qim_cql_result_render` (what `qim-cql` prints and `Row::render` returns), and
//! the CQL-like display of the value types the typed getters do not cover, which `result` keeps as
//! text when it decodes a row. Nothing here is on the store's hot path.

use std::ffi::c_char;

use scylla::value::CqlValue;

use crate::accessors::cell;
use crate::codes::*;
use crate::ffi::guard;
use crate::result::{qim_cql_result, Cell};

/// Two lower-case hex digits per byte.
fn hex_digits(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex(bytes: &[u8]) -> String {
    format!("0x{}", hex_digits(bytes))
}

fn uuid_text(b: &[u8; 16]) -> String {
    let h = hex_digits(b);
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
pub(crate) fn display_value(v: &CqlValue) -> String {
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
