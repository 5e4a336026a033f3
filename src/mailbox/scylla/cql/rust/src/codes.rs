//! Every number shared with `qim_cql.h`: status codes, consistency levels, value kinds, column types and
//! batch types. They live together so that keeping the header and the crate in sync means comparing one
//! file with one header; nothing else in the crate spells a number of the ABI.

// Status codes (QIM_CQL_OK, QIM_CQL_ERR_*), public as in the header.
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

// Consistency levels (QIM_CQL_CONSISTENCY_*), for `consistency` and `serial_consistency`.
pub(crate) const CONSISTENCY_DEFAULT: i32 = 0;
pub(crate) const CONSISTENCY_ANY: i32 = 1;
pub(crate) const CONSISTENCY_ONE: i32 = 2;
pub(crate) const CONSISTENCY_TWO: i32 = 3;
pub(crate) const CONSISTENCY_THREE: i32 = 4;
pub(crate) const CONSISTENCY_QUORUM: i32 = 5;
pub(crate) const CONSISTENCY_ALL: i32 = 6;
pub(crate) const CONSISTENCY_LOCAL_QUORUM: i32 = 7;
pub(crate) const CONSISTENCY_EACH_QUORUM: i32 = 8;
pub(crate) const CONSISTENCY_LOCAL_ONE: i32 = 9;
pub(crate) const CONSISTENCY_SERIAL: i32 = 10;
pub(crate) const CONSISTENCY_LOCAL_SERIAL: i32 = 11;

// Kinds of bound values (QIM_CQL_VALUE_*).
pub(crate) const VALUE_NULL: i32 = 0;
pub(crate) const VALUE_UNSET: i32 = 1;
pub(crate) const VALUE_BIGINT: i32 = 2;
pub(crate) const VALUE_INT: i32 = 3;
pub(crate) const VALUE_SMALLINT: i32 = 4;
pub(crate) const VALUE_BOOLEAN: i32 = 5;
pub(crate) const VALUE_TEXT: i32 = 6;
pub(crate) const VALUE_BLOB: i32 = 7;
pub(crate) const VALUE_LIST_BIGINT: i32 = 8;
pub(crate) const VALUE_LIST_TEXT: i32 = 9;

// Result column types (QIM_CQL_TYPE_*).
pub(crate) const TYPE_INVALID: i32 = -1;
pub(crate) const TYPE_OTHER: i32 = 0;
pub(crate) const TYPE_BIGINT: i32 = 1;
pub(crate) const TYPE_INT: i32 = 2;
pub(crate) const TYPE_SMALLINT: i32 = 3;
pub(crate) const TYPE_TINYINT: i32 = 4;
pub(crate) const TYPE_BOOLEAN: i32 = 5;
pub(crate) const TYPE_TEXT: i32 = 6;
pub(crate) const TYPE_BLOB: i32 = 7;
pub(crate) const TYPE_LIST_BIGINT: i32 = 8;
pub(crate) const TYPE_TIMESTAMP: i32 = 9;
pub(crate) const TYPE_COUNTER: i32 = 10;
pub(crate) const TYPE_UUID: i32 = 11;
pub(crate) const TYPE_TIMEUUID: i32 = 12;

// Batch types (QIM_CQL_BATCH_*).
pub(crate) const BATCH_LOGGED: i32 = 0;
pub(crate) const BATCH_UNLOGGED: i32 = 1;
