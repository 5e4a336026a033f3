// cql_session.h: QIM's CQL client for C++ (the Rust `scylla` driver behind qim_cql.h).
//
// A Session talks to a Cassandra/ScyllaDB cluster. Prepare statements once, then execute them with
// bound Values, per-call ExecOptions (consistency, client timestamp, paging), blocking or
// asynchronously. Errors are values: every fallible call returns Result<T>, holding either the value or
// a CqlError {code, message}; nothing here throws on a CQL failure.
//
// Thread safety: a Session, a Prepared and a Rows may be used from many threads at once (const
// methods). close() and the destructor must not race with other calls on the same Session.
// Blocking calls must not be made from inside the driver's threads; this wrapper never runs user code
// there (async completions only fulfil a promise).
//
// Example:
//   auto session = qim::cql::Session::connect({.hosts = {"127.0.0.1"}});
//   if (!session) return session.error();
//   auto insert = session->prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)");
//   std::vector<qim::cql::PendingResult> writes;
//   for (...) writes.push_back(session->execute_async(*insert, Values().bigint(k).text(v)));
//   if (auto st = qim::cql::wait_all(writes); !st) ...;

#ifndef QIM_MAILBOX_SCYLLA_CQL_CQL_SESSION_H_
#define QIM_MAILBOX_SCYLLA_CQL_CQL_SESSION_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "qim_cql.h"

namespace qim::cql {

// ---- errors and results --------------------------------------------------------------------------

// The error kinds of qim_cql.h (same numbers).
enum class CqlErrc : int32_t {
  kOk = QIM_CQL_OK,
  kConnect = QIM_CQL_ERR_CONNECT,             // no node reachable, connection broken
  kTimeout = QIM_CQL_ERR_TIMEOUT,             // client-side request timeout
  kUnavailable = QIM_CQL_ERR_UNAVAILABLE,     // not enough live replicas for the consistency level
  kInvalid = QIM_CQL_ERR_INVALID,             // syntax error, invalid request, bad bound value
  kWriteTimeout = QIM_CQL_ERR_WRITE_TIMEOUT,  // replicas did not acknowledge a write in time
  kReadTimeout = QIM_CQL_ERR_READ_TIMEOUT,    // replicas did not answer a read in time
  kOverloaded = QIM_CQL_ERR_OVERLOADED,       // coordinator overloaded / rate limited
  kClosed = QIM_CQL_ERR_CLOSED,               // session closed (or never connected)
  kBadArg = QIM_CQL_ERR_BAD_ARG,              // caller misuse; also a getter of the wrong type
  kNull = QIM_CQL_ERR_NULL,                   // a typed getter on a NULL cell
  kOther = QIM_CQL_ERR_OTHER,                 // anything else
};

// Stable upper-case name of a code ("INVALID", "WRITE_TIMEOUT", ...).
std::string_view errc_name(CqlErrc code) noexcept;

struct CqlError {
  CqlErrc code = CqlErrc::kOther;
  std::string message;
  // "NAME: message".
  std::string to_string() const;
};

// Either a T or a CqlError. value()/operator* require ok() (std::bad_variant_access otherwise).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}         // NOLINT: implicit
  Result(CqlError error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // Requires !ok().
  const CqlError& error() const { return std::get<1>(v_); }
  // The error code, or CqlErrc::kOk.
  CqlErrc code() const noexcept { return ok() ? CqlErrc::kOk : std::get<1>(v_).code; }

 private:
  std::variant<T, CqlError> v_;
};

// Success without a value, or a CqlError.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(CqlError error) : error_(std::move(error)) {}  // NOLINT: implicit

  bool ok() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  // Requires !ok().
  const CqlError& error() const { return *error_; }
  CqlErrc code() const noexcept { return error_ ? error_->code : CqlErrc::kOk; }

 private:
  std::optional<CqlError> error_;
};

using Status = Result<void>;

// ---- options --------------------------------------------------------------------------------------

enum class Consistency : int32_t {
  kDefault = QIM_CQL_CONSISTENCY_DEFAULT,  // session default: LOCAL_QUORUM (serial: LOCAL_SERIAL)
  kAny = QIM_CQL_CONSISTENCY_ANY,
  kOne = QIM_CQL_CONSISTENCY_ONE,
  kTwo = QIM_CQL_CONSISTENCY_TWO,
  kThree = QIM_CQL_CONSISTENCY_THREE,
  kQuorum = QIM_CQL_CONSISTENCY_QUORUM,
  kAll = QIM_CQL_CONSISTENCY_ALL,
  kLocalQuorum = QIM_CQL_CONSISTENCY_LOCAL_QUORUM,
  kEachQuorum = QIM_CQL_CONSISTENCY_EACH_QUORUM,
  kLocalOne = QIM_CQL_CONSISTENCY_LOCAL_ONE,
  kSerial = QIM_CQL_CONSISTENCY_SERIAL,
  kLocalSerial = QIM_CQL_CONSISTENCY_LOCAL_SERIAL,
};

// Parses "ONE", "quorum", "LOCAL_QUORUM", "SERIAL", ... (case-insensitive); nullopt if unknown.
std::optional<Consistency> parse_consistency(std::string_view name) noexcept;

enum class BatchType : int32_t { kLogged = QIM_CQL_BATCH_LOGGED, kUnlogged = QIM_CQL_BATCH_UNLOGGED };

// An opaque token to continue a paged read after the last row returned.
using PagingState = std::vector<uint8_t>;

// Per-call options. Aggregate: ExecOptions{.consistency = Consistency::kQuorum, .timestamp_us = ts}.
struct ExecOptions {
  Consistency consistency = Consistency::kDefault;
  // For LWT (INSERT ... IF NOT EXISTS, UPDATE ... IF): kSerial or kLocalSerial; kDefault = LOCAL_SERIAL.
  Consistency serial_consistency = Consistency::kDefault;
  // Client write timestamp in microseconds (the statement's USING TIMESTAMP); negative: none.
  int64_t timestamp_us = -1;
  // <= 0: unpaged, every row in one response. > 0: paged with this page size, see max_rows.
  int32_t page_size = 0;
  // Paged only. 0: one page. > 0: pages until exactly max_rows rows or the end. < 0: every page.
  int64_t max_rows = 0;
  // Paged only: continue from Rows::paging_state() of an earlier call with the same statement/values.
  PagingState paging_state;
  // 0: the session's request timeout.
  uint32_t timeout_ms = 0;
  // The driver may retry idempotent statements after a timeout.
  bool idempotent = false;
};

// ---- bound values ----------------------------------------------------------------------------------

// Builder of the values bound to a statement's `?` markers, in order. Copies its inputs.
//   Values().bigint(user).bigint(seq).text(body).blob(bytes).null()
class Values {
 public:
  Values() = default;

  Values& null();
  Values& unset();            // leave the column untouched
  Values& bigint(int64_t v);  // bigint; also timestamp (ms since epoch) and counter columns
  Values& timestamp_ms(int64_t v) { return bigint(v); }
  Values& int32(int32_t v);     // int (also binds a bigint column)
  Values& smallint(int16_t v);  // smallint (also int, bigint)
  Values& boolean(bool v);
  Values& text(std::string_view utf8);  // text/varchar/ascii; must be valid UTF-8
  Values& blob(std::span<const uint8_t> bytes);
  Values& blob(std::string_view bytes);
  Values& bigint_list(std::span<const int64_t> items);  // list<bigint> or set<bigint>
  // list<text> or set<text>, and what `col IN ?` binds; each item must be valid UTF-8.
  Values& text_list(std::span<const std::string> items);

  size_t size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }

  // The C view of the values; pointers stay valid until *this is modified or destroyed or raw() is
  // called again. Not safe to call from two threads on one Values.
  std::vector<qim_cql_value> raw() const;
  // The bytes the values take on the wire, about (text, blob and list payloads, 8 per number): what a
  // caller bounding a batch's size counts.
  size_t wire_bytes() const noexcept;

 private:
  struct Item {
    int32_t kind = QIM_CQL_VALUE_NULL;
    int64_t i64 = 0;
    std::string bytes;                              // text, blob
    std::vector<int64_t> list;                      // list<bigint>
    std::vector<std::string> texts;                 // list<text>
    mutable std::vector<qim_cql_value> text_views;  // texts' C view, made by raw()
  };
  Values& push(Item item);
  std::vector<Item> items_;
};

// ---- results --------------------------------------------------------------------------------------

enum class ColumnType : int32_t {
  kInvalid = QIM_CQL_TYPE_INVALID,
  kOther = QIM_CQL_TYPE_OTHER,
  kBigint = QIM_CQL_TYPE_BIGINT,
  kInt = QIM_CQL_TYPE_INT,
  kSmallint = QIM_CQL_TYPE_SMALLINT,
  kTinyint = QIM_CQL_TYPE_TINYINT,
  kBoolean = QIM_CQL_TYPE_BOOLEAN,
  kText = QIM_CQL_TYPE_TEXT,
  kBlob = QIM_CQL_TYPE_BLOB,
  kBigintList = QIM_CQL_TYPE_LIST_BIGINT,
  kTimestamp = QIM_CQL_TYPE_TIMESTAMP,
  kCounter = QIM_CQL_TYPE_COUNTER,
  kUuid = QIM_CQL_TYPE_UUID,
  kTimeuuid = QIM_CQL_TYPE_TIMEUUID,
};

// A view of one row of a Rows; valid as long as that Rows. Getters return kNull for a NULL cell and
// kBadArg for a column out of range or of another type.
class Row {
 public:
  size_t index() const noexcept { return row_; }
  // True for a NULL cell (and for a column out of range).
  bool is_null(size_t col) const noexcept;
  // bigint, counter, timestamp (ms), and widened int/smallint/tinyint. WRITETIME(x) is a bigint.
  Result<int64_t> get_i64(size_t col) const;
  // int, and widened smallint/tinyint. TTL(x) is an int.
  Result<int32_t> get_i32(size_t col) const;
  Result<bool> get_bool(size_t col) const;
  Result<std::string_view> get_text(size_t col) const;
  // blob; uuid and timeuuid as 16 bytes.
  Result<std::span<const uint8_t>> get_blob(size_t col) const;
  // list<bigint> / set<bigint>. An empty collection reads as NULL (CQL stores none).
  Result<std::span<const int64_t>> get_i64_list(size_t col) const;
  // Human-readable text of any cell ("null", 0x-hex for blobs, [a, b] for lists).
  std::string render(size_t col) const;

 private:
  friend class Rows;
  Row(const qim_cql_result* result, size_t row) noexcept : result_(result), row_(row) {}
  const qim_cql_result* result_;
  size_t row_;
};

// The rows of a successful request (empty for statements that return none). Move-only; owns them.
class Rows {
 public:
  Rows() = default;
  // Takes ownership of a successful qim_cql_result.
  explicit Rows(qim_cql_result* result) noexcept : result_(result) {}

  size_t size() const noexcept;
  bool empty() const noexcept { return size() == 0; }
  size_t column_count() const noexcept;
  // "" if out of range.
  std::string_view column_name(size_t col) const noexcept;
  ColumnType column_type(size_t col) const noexcept;
  std::optional<size_t> column_index(std::string_view name) const;

  // Requires i < size().
  Row operator[](size_t i) const noexcept { return Row(result_.get(), i); }
  Row row(size_t i) const noexcept { return Row(result_.get(), i); }

  // For an LWT: the [applied] column of the first row; nullopt if there is no such column/row.
  std::optional<bool> applied() const;

  // Paged requests: whether more rows follow, and the token to fetch them.
  bool has_more_pages() const noexcept;
  PagingState paging_state() const;

  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Row;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;
    Iterator(const Rows* rows, size_t i) : rows_(rows), i_(i) {}
    Row operator*() const noexcept { return rows_->row(i_); }
    Iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    Iterator operator++(int) noexcept {
      Iterator t = *this;
      ++i_;
      return t;
    }
    bool operator==(const Iterator& o) const noexcept { return i_ == o.i_; }

   private:
    const Rows* rows_ = nullptr;
    size_t i_ = 0;
  };
  Iterator begin() const noexcept { return Iterator(this, 0); }
  Iterator end() const noexcept { return Iterator(this, size()); }

  const qim_cql_result* raw() const noexcept { return result_.get(); }

 private:
  struct Free {
    void operator()(qim_cql_result* r) const noexcept { qim_cql_result_free(r); }
  };
  std::unique_ptr<qim_cql_result, Free> result_;
};

// ---- statements -------------------------------------------------------------------------------------

// A statement prepared on the cluster. Move-only. Use it with the Session that prepared it; it may be
// destroyed while asynchronous executions of it are in flight.
class Prepared {
 public:
  Prepared() = default;
  explicit Prepared(qim_cql_prepared* p) noexcept : p_(p) {}
  size_t param_count() const noexcept { return qim_cql_prepared_param_count(p_.get()); }
  bool valid() const noexcept { return p_ != nullptr; }
  const qim_cql_prepared* raw() const noexcept { return p_.get(); }

 private:
  struct Free {
    void operator()(qim_cql_prepared* p) const noexcept { qim_cql_prepared_free(p); }
  };
  std::unique_ptr<qim_cql_prepared, Free> p_;
};

// A batch of prepared statements with their values. Holds pointers to the Prepared objects, which must
// outlive the call that runs the batch (not longer).
class Batch {
 public:
  explicit Batch(BatchType type = BatchType::kLogged) : type_(type) {}
  Batch& add(const Prepared& statement, Values values);
  size_t size() const noexcept { return items_.size(); }
  BatchType type() const noexcept { return type_; }

 private:
  friend class Session;
  BatchType type_;
  std::vector<std::pair<const Prepared*, Values>> items_;
};

// ---- asynchronous results -----------------------------------------------------------------------------

// The future result of an async call. Copyable (shared state); get() may be called many times.
class PendingResult {
 public:
  PendingResult() = default;
  explicit PendingResult(std::shared_future<Result<Rows>> f) : future_(std::move(f)) {}
  // An already completed result (used for calls rejected before they started).
  static PendingResult completed(Result<Rows> result);

  // False for a default-constructed PendingResult.
  bool valid() const noexcept { return future_.valid(); }
  bool ready() const { return wait_for(std::chrono::seconds(0)); }
  void wait() const { future_.wait(); }
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& d) const {
    return future_.wait_for(d) == std::future_status::ready;
  }
  // Waits, then returns the result; the reference lives as long as any copy of this PendingResult.
  const Result<Rows>& get() const { return future_.get(); }

 private:
  std::shared_future<Result<Rows>> future_;
};

// Waits for every pending result (even after one fails). Returns OK if all succeeded, otherwise the
// error of the first failed one in span order. An invalid PendingResult counts as kBadArg.
Status wait_all(std::span<const PendingResult> pending);

// ---- session --------------------------------------------------------------------------------------------

struct SessionOptions {
  // Contact points: "host", "host:port", "[v6]:port" (port 9042 when omitted). The rest is discovered.
  std::vector<std::string> hosts;
  // Local datacenter; empty: every node is eligible.
  std::string local_dc;
  // Default client-side timeout of each request (also bounds connecting, at least 10 s).
  uint32_t request_timeout_ms = 5000;
};

// Splits "a,b:9043, c" into {"a", "b:9043", "c"} (the QIM_CQL_HOSTS format); empty items dropped.
std::vector<std::string> split_hosts(std::string_view csv);

class Session {
 public:
  // Connects (blocking). kConnect if no contact point answers; kBadArg for empty hosts.
  static Result<Session> connect(const SessionOptions& options);

  Session() = default;  // not connected: every call returns kClosed
  Session(Session&&) noexcept = default;
  Session& operator=(Session&&) noexcept = default;
  ~Session() = default;  // closes (see close())

  // Closes the connections. Every async call still in flight completes before this returns: with its
  // result if it finished in time, otherwise with kClosed. wait_all() first to let writes finish.
  void close() noexcept { s_.reset(); }
  bool connected() const noexcept { return s_ != nullptr; }

  // Prepares a statement with `?` markers. kInvalid (with the server's message) for bad CQL.
  Result<Prepared> prepare(std::string_view cql) const;

  // Executes a prepared statement, blocking. Rows of a SELECT / the [applied] row of an LWT.
  Result<Rows> execute(const Prepared& statement, const Values& values = {},
                       const ExecOptions& options = {}) const;
  // Starts the same request; the PendingResult completes from a driver thread.
  PendingResult execute_async(const Prepared& statement, const Values& values = {},
                              const ExecOptions& options = {}) const;

  // Runs an unprepared statement (schema DDL, one-off queries), blocking. DDL waits for schema
  // agreement. With values the driver prepares it first.
  Result<Rows> query(std::string_view cql, const Values& values = {}, const ExecOptions& options = {}) const;
  PendingResult query_async(std::string_view cql, const Values& values = {},
                            const ExecOptions& options = {}) const;

  // Runs a batch in one request; options.timestamp_us is the batch timestamp, paging is rejected.
  Result<Rows> batch(const Batch& batch, const ExecOptions& options = {}) const;
  PendingResult batch_async(const Batch& batch, const ExecOptions& options = {}) const;

  qim_cql_session* raw() const noexcept { return s_.get(); }

 private:
  struct Close {
    void operator()(qim_cql_session* s) const noexcept { qim_cql_session_close(s); }
  };
  explicit Session(qim_cql_session* s) noexcept : s_(s) {}
  std::unique_ptr<qim_cql_session, Close> s_;
};

}  // namespace qim::cql

#endif  // QIM_MAILBOX_SCYLLA_CQL_CQL_SESSION_H_
