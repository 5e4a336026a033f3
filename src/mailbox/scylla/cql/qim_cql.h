/* qim_cql.h: C ABI of QIM's CQL client (the Rust `scylla` driver 1.x, crate rust/ beside this file).
 *
 * Written by hand; the modules of rust/src/ implement it (rust/src/lib.rs lists them) and the numbers
 * below must match rust/src/codes.rs.
 *
 * Threads: every function may be called from any thread. All calls on one session may run
 * concurrently, except qim_cql_session_close, which must be the last call on that session.
 * Each session owns one multi-threaded tokio runtime with 2 worker threads.
 *
 * Blocking calls (connect, prepare, execute, query, batch) run on the caller's thread and must not be
 * called from a completion callback (they fail with QIM_CQL_ERR_BAD_ARG there).
 *
 * Ownership:
 *  - qim_cql_session*  : from qim_cql_connect; release with qim_cql_session_close.
 *  - qim_cql_prepared* : from qim_cql_prepare; release with qim_cql_prepared_free (any time: calls
 *                        already made with it keep their own copy).
 *  - qim_cql_result*   : from execute/query/batch (never NULL) or handed to a callback; release with
 *                        qim_cql_result_free. Every pointer read from a result (message, column name,
 *                        text, blob, list, paging state) lives exactly as long as the result.
 *  - qim_cql_error     : message is owned by the struct; release with qim_cql_error_clear.
 *  - Inputs (CQL text, values, options, batch items, paging state) are borrowed only during the call
 *    that receives them, including the *_async calls: the library copies what it keeps.
 *
 * No Rust panic crosses this boundary: a panic inside the library becomes QIM_CQL_ERR_OTHER.
 */
#ifndef QIM_MAILBOX_SCYLLA_CQL_QIM_CQL_H_
#define QIM_MAILBOX_SCYLLA_CQL_QIM_CQL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ------------------------------------------------------------------------------ */

enum {
  QIM_CQL_OK = 0,
  QIM_CQL_ERR_CONNECT = 1,       /* no connection to any node, broken connection, empty plan */
  QIM_CQL_ERR_TIMEOUT = 2,       /* client-side request timeout expired */
  QIM_CQL_ERR_UNAVAILABLE = 3,   /* coordinator: not enough live replicas for the consistency */
  QIM_CQL_ERR_INVALID = 4,       /* syntax error, invalid request, already exists, bad bound value */
  QIM_CQL_ERR_WRITE_TIMEOUT = 5, /* coordinator: replicas did not acknowledge the write in time */
  QIM_CQL_ERR_READ_TIMEOUT = 6,  /* coordinator: replicas did not answer the read in time */
  QIM_CQL_ERR_OVERLOADED = 7,    /* coordinator overloaded or rate limit reached */
  QIM_CQL_ERR_CLOSED = 8,        /* the session was closed before the request completed */
  QIM_CQL_ERR_BAD_ARG = 9,       /* caller misuse: NULL, bad UTF-8, unknown code, wrong getter type */
  QIM_CQL_ERR_NULL = 10,         /* a typed getter was called on a NULL cell */
  QIM_CQL_ERR_OTHER = 11         /* anything else (server error, protocol error, internal panic) */
};

/* ---- consistency levels (per call) ------------------------------------------------------------- */

enum {
  QIM_CQL_CONSISTENCY_DEFAULT = 0, /* session default: LOCAL_QUORUM (as serial_consistency: LOCAL_SERIAL) */
  QIM_CQL_CONSISTENCY_ANY = 1,
  QIM_CQL_CONSISTENCY_ONE = 2,
  QIM_CQL_CONSISTENCY_TWO = 3,
  QIM_CQL_CONSISTENCY_THREE = 4,
  QIM_CQL_CONSISTENCY_QUORUM = 5,
  QIM_CQL_CONSISTENCY_ALL = 6,
  QIM_CQL_CONSISTENCY_LOCAL_QUORUM = 7,
  QIM_CQL_CONSISTENCY_EACH_QUORUM = 8,
  QIM_CQL_CONSISTENCY_LOCAL_ONE = 9,
  QIM_CQL_CONSISTENCY_SERIAL = 10,      /* as consistency: a serial (linearizable) read */
  QIM_CQL_CONSISTENCY_LOCAL_SERIAL = 11 /* as serial_consistency: the Paxos phase of an LWT */
};

/* ---- bound values ------------------------------------------------------------------------------ */

enum {
  QIM_CQL_VALUE_NULL = 0,
  QIM_CQL_VALUE_UNSET = 1,       /* leaves the column untouched (protocol v4 "unset") */
  QIM_CQL_VALUE_BIGINT = 2,      /* i64; also binds timestamp (ms since epoch) and counter columns */
  QIM_CQL_VALUE_INT = 3,         /* i64 holding an int32; also binds bigint columns */
  QIM_CQL_VALUE_SMALLINT = 4,    /* i64 holding an int16; also binds int and bigint columns */
  QIM_CQL_VALUE_BOOLEAN = 5,     /* i64: 0 false, anything else true */
  QIM_CQL_VALUE_TEXT = 6,        /* ptr/len: UTF-8 bytes (no NUL needed); text, varchar, ascii */
  QIM_CQL_VALUE_BLOB = 7,        /* ptr/len: bytes */
  QIM_CQL_VALUE_LIST_BIGINT = 8, /* ptr: const int64_t*, len: element count; list<bigint> or set<bigint> */
  QIM_CQL_VALUE_LIST_TEXT = 9    /* ptr: const qim_cql_value* of kind TEXT, len: element count; list<text>,
                                    set<text>, and the list an `IN ?` marker binds */
};

typedef struct qim_cql_value {
  int32_t kind;    /* QIM_CQL_VALUE_* */
  int64_t i64;     /* BIGINT, INT, SMALLINT, BOOLEAN */
  const void* ptr; /* TEXT, BLOB, LIST_BIGINT, LIST_TEXT (may be NULL when len is 0) */
  size_t len;
} qim_cql_value;

/* ---- result column types ----------------------------------------------------------------------- */

enum {
  QIM_CQL_TYPE_INVALID = -1,    /* column index out of range */
  QIM_CQL_TYPE_OTHER = 0,       /* any other type: only qim_cql_result_render reads it */
  QIM_CQL_TYPE_BIGINT = 1,      /* get_i64 (WRITETIME(...) is a bigint) */
  QIM_CQL_TYPE_INT = 2,         /* get_i32 or get_i64 (TTL(...) is an int) */
  QIM_CQL_TYPE_SMALLINT = 3,    /* get_i32 or get_i64 */
  QIM_CQL_TYPE_TINYINT = 4,     /* get_i32 or get_i64 */
  QIM_CQL_TYPE_BOOLEAN = 5,     /* get_bool ([applied] of an LWT is a boolean column) */
  QIM_CQL_TYPE_TEXT = 6,        /* get_text (text, varchar, ascii) */
  QIM_CQL_TYPE_BLOB = 7,        /* get_blob */
  QIM_CQL_TYPE_LIST_BIGINT = 8, /* get_i64_list (list<bigint> or set<bigint>; empty reads as NULL) */
  QIM_CQL_TYPE_TIMESTAMP = 9,   /* get_i64: milliseconds since the epoch */
  QIM_CQL_TYPE_COUNTER = 10,    /* get_i64 */
  QIM_CQL_TYPE_UUID = 11,       /* get_blob: 16 bytes */
  QIM_CQL_TYPE_TIMEUUID = 12    /* get_blob: 16 bytes */
};

enum { QIM_CQL_BATCH_LOGGED = 0, QIM_CQL_BATCH_UNLOGGED = 1 };

/* ---- per-call options -------------------------------------------------------------------------- */

typedef struct qim_cql_exec_opts {
  int32_t consistency;         /* QIM_CQL_CONSISTENCY_*; DEFAULT = session default (LOCAL_QUORUM) */
  int32_t serial_consistency;  /* DEFAULT (LOCAL_SERIAL), SERIAL or LOCAL_SERIAL: Paxos level of an LWT */
  int64_t timestamp_us;        /* client write timestamp in microseconds (USING TIMESTAMP); < 0: none */
  int32_t page_size;           /* <= 0: unpaged, all rows in one response; > 0: paged, see max_rows */
  int64_t max_rows;            /* paged only: 0 = one page; > 0 = fetch pages until exactly this many
                                  rows or the end; < 0 = fetch every page */
  const uint8_t* paging_state; /* paged only: continue after a previous result's paging state */
  size_t paging_state_len;     /* 0: start from the beginning */
  uint32_t timeout_ms;         /* 0: the session's request timeout */
  int32_t idempotent;          /* non-zero: the driver may retry the statement on timeouts */
} qim_cql_exec_opts;

/* Fills *opts with the defaults (all DEFAULT/0, timestamp_us = -1). */
void qim_cql_exec_opts_init(qim_cql_exec_opts* opts);

/* ---- handles ------------------------------------------------------------------------------------ */

typedef struct qim_cql_session qim_cql_session;
typedef struct qim_cql_prepared qim_cql_prepared;
typedef struct qim_cql_result qim_cql_result;

typedef struct qim_cql_error {
  int32_t code;  /* QIM_CQL_* */
  char* message; /* NUL-terminated, owned; NULL when code is QIM_CQL_OK */
} qim_cql_error;

/* Initialise an error struct with {QIM_CQL_OK, NULL} before its first use. Frees the message and
 * resets the struct to {QIM_CQL_OK, NULL}; safe on an already clear struct. */
void qim_cql_error_clear(qim_cql_error* err);

/* Static version string of the library; never freed. */
const char* qim_cql_version(void);

/* ---- session ------------------------------------------------------------------------------------ */

/* Connects to the cluster through the given contact points ("host", "host:port", "[v6]:port";
 * port 9042 when omitted) and discovers the other nodes. local_dc may be NULL or "": without it every
 * node is eligible; with it only that DC's nodes are used. request_timeout_ms (> 0) is the default
 * client-side timeout of every request. Returns QIM_CQL_OK and *out, or an error code with *out = NULL
 * and err filled (QIM_CQL_ERR_CONNECT when no node could be reached). err may be NULL. */
int32_t qim_cql_connect(const char* const* hosts, size_t n_hosts, const char* local_dc,
                        uint32_t request_timeout_ms, qim_cql_session** out, qim_cql_error* err);

/* Closes the connections and stops the runtime; waits (up to 10 s) for it. Every asynchronous request
 * still in flight has its callback run before this returns: with its result if it completed in time,
 * otherwise with QIM_CQL_ERR_CLOSED (never with a connection error caused by the close). To finish
 * writes, wait for their callbacks first. session may be NULL. The handle is invalid afterwards. */
void qim_cql_session_close(qim_cql_session* session);

/* ---- prepared statements ---------------------------------------------------------------------- */

/* Prepares a CQL statement with `?` markers on the cluster. Returns QIM_CQL_OK and *out, or an error
 * code (QIM_CQL_ERR_INVALID for a syntax error or an unknown table) with *out = NULL and err filled. */
int32_t qim_cql_prepare(qim_cql_session* session, const char* cql, qim_cql_prepared** out,
                        qim_cql_error* err);

/* Number of bind markers of the statement; 0 for NULL. */
size_t qim_cql_prepared_param_count(const qim_cql_prepared* prepared);

/* Frees a prepared statement; NULL is ignored. */
void qim_cql_prepared_free(qim_cql_prepared* prepared);

/* ---- requests ----------------------------------------------------------------------------------- */

/* Completion callback of the *_async calls: runs exactly once, on a runtime thread, with a result the
 * callee owns (free it with qim_cql_result_free, from any thread). It must return quickly, must not
 * throw or unwind, and must not call blocking functions of this library. */
typedef void (*qim_cql_callback)(void* user_data, qim_cql_result* result);

/* Executes a prepared statement with n_values bound values (opts may be NULL for the defaults).
 * Blocks until done. Never returns NULL: check qim_cql_result_code. Rows of a SELECT, or the
 * [applied] row of an LWT, are in the result; other statements give an OK result with no rows. */
qim_cql_result* qim_cql_execute(qim_cql_session* session, const qim_cql_prepared* prepared,
                                const qim_cql_value* values, size_t n_values, const qim_cql_exec_opts* opts);

/* Starts the same request without blocking. Returns QIM_CQL_OK when the request was started (then cb
 * runs exactly once, even if the session is closed meanwhile), or an error code with err filled when
 * the arguments are rejected up front (then cb never runs). err may be NULL. */
int32_t qim_cql_execute_async(qim_cql_session* session, const qim_cql_prepared* prepared,
                              const qim_cql_value* values, size_t n_values, const qim_cql_exec_opts* opts,
                              qim_cql_callback cb, void* user_data, qim_cql_error* err);

/* Runs an unprepared statement (schema DDL, one-off queries). With values the driver prepares it
 * first (two round trips); schema changes wait for schema agreement. Never returns NULL. */
qim_cql_result* qim_cql_query(qim_cql_session* session, const char* cql, const qim_cql_value* values,
                              size_t n_values, const qim_cql_exec_opts* opts);

/* Asynchronous qim_cql_query; same contract as qim_cql_execute_async. */
int32_t qim_cql_query_async(qim_cql_session* session, const char* cql, const qim_cql_value* values,
                            size_t n_values, const qim_cql_exec_opts* opts, qim_cql_callback cb,
                            void* user_data, qim_cql_error* err);

typedef struct qim_cql_batch_item {
  const qim_cql_prepared* prepared;
  const qim_cql_value* values;
  size_t n_values;
} qim_cql_batch_item;

/* Runs a LOGGED or UNLOGGED batch of prepared statements in one request. opts->timestamp_us applies to
 * the whole batch (statements must not carry their own USING TIMESTAMP then); paging options are
 * rejected. A conditional batch returns its [applied] row(s). Never returns NULL. */
qim_cql_result* qim_cql_batch(qim_cql_session* session, int32_t batch_type, const qim_cql_batch_item* items,
                              size_t n_items, const qim_cql_exec_opts* opts);

/* Asynchronous qim_cql_batch; same contract as qim_cql_execute_async. */
int32_t qim_cql_batch_async(qim_cql_session* session, int32_t batch_type, const qim_cql_batch_item* items,
                            size_t n_items, const qim_cql_exec_opts* opts, qim_cql_callback cb,
                            void* user_data, qim_cql_error* err);

/* ---- results ------------------------------------------------------------------------------------ */

/* QIM_CQL_OK, or the error code of the failed request (a failed result has no rows). */
int32_t qim_cql_result_code(const qim_cql_result* result);

/* The error message; "" for a successful result. Lives as long as the result. */
const char* qim_cql_result_message(const qim_cql_result* result);

size_t qim_cql_result_row_count(const qim_cql_result* result);
size_t qim_cql_result_column_count(const qim_cql_result* result);

/* Column name as the server returned it (e.g. "[applied]", "writetime(v)"); NULL if out of range. */
const char* qim_cql_result_column_name(const qim_cql_result* result, size_t col);

/* QIM_CQL_TYPE_* of the column; QIM_CQL_TYPE_INVALID if out of range. */
int32_t qim_cql_result_column_type(const qim_cql_result* result, size_t col);

/* Index of the column with exactly this name, or -1. */
int64_t qim_cql_result_column_index(const qim_cql_result* result, const char* name);

/* 1 if the cell is NULL, 0 if it holds a value, -1 if row/col is out of range. */
int32_t qim_cql_result_is_null(const qim_cql_result* result, size_t row, size_t col);

/* Typed getters. Return QIM_CQL_OK and write *out; QIM_CQL_ERR_NULL for a NULL cell;
 * QIM_CQL_ERR_BAD_ARG for an index out of range or a cell of another type (get_i64 widens
 * int/smallint/tinyint and reads timestamp and counter; get_i32 widens smallint/tinyint). */
int32_t qim_cql_result_get_i64(const qim_cql_result* result, size_t row, size_t col, int64_t* out);
int32_t qim_cql_result_get_i32(const qim_cql_result* result, size_t row, size_t col, int32_t* out);
int32_t qim_cql_result_get_bool(const qim_cql_result* result, size_t row, size_t col, bool* out);

/* Pointer/length getters: the data lives as long as the result. Text is UTF-8 and also
 * NUL-terminated (len excludes the NUL). Blob also reads uuid/timeuuid columns (16 bytes). */
int32_t qim_cql_result_get_text(const qim_cql_result* result, size_t row, size_t col, const char** out,
                                size_t* len);
int32_t qim_cql_result_get_blob(const qim_cql_result* result, size_t row, size_t col, const uint8_t** out,
                                size_t* len);
int32_t qim_cql_result_get_i64_list(const qim_cql_result* result, size_t row, size_t col, const int64_t** out,
                                    size_t* len);

/* Writes a human-readable rendering of any cell ("null", numbers, text, 0x-hex blobs, uuids,
 * [a, b] lists, other types in the driver's debug form) into buf, snprintf-style: at most cap-1
 * bytes plus a NUL. Returns the full length (0 and "" when out of range). buf may be NULL if cap is 0. */
size_t qim_cql_result_render(const qim_cql_result* result, size_t row, size_t col, char* buf, size_t cap);

/* Paged requests: returns 1 and the token to pass as opts->paging_state to continue after the last
 * returned row, or 0 (with *out = NULL, *len = 0) when there are no more pages. out/len may be NULL. */
int32_t qim_cql_result_paging_state(const qim_cql_result* result, const uint8_t** out, size_t* len);

/* Frees a result and everything read from it; NULL is ignored. */
void qim_cql_result_free(qim_cql_result* result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QIM_MAILBOX_SCYLLA_CQL_QIM_CQL_H_ */
