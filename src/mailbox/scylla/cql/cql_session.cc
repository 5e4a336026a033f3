// cql_session.cc: the C++ wrapper over qim_cql.h.

#include "cql_session.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace qim::cql {
namespace {

CqlErrc to_errc(int32_t code) noexcept {
  if (code < QIM_CQL_OK || code > QIM_CQL_ERR_OTHER) return CqlErrc::kOther;
  return static_cast<CqlErrc>(code);
}

// Takes the message out of a qim_cql_error and clears it.
CqlError take_error(int32_t code, qim_cql_error& err) {
  CqlError e{to_errc(code), err.message != nullptr ? std::string(err.message) : std::string()};
  qim_cql_error_clear(&err);
  return e;
}

// Takes ownership of a result handle from the C side.
Result<Rows> to_result(qim_cql_result* r) {
  if (r == nullptr) return CqlError{CqlErrc::kOther, "qim_cql returned no result"};
  const int32_t code = qim_cql_result_code(r);
  if (code != QIM_CQL_OK) {
    CqlError e{to_errc(code), qim_cql_result_message(r)};
    qim_cql_result_free(r);
    return e;
  }
  return Rows(r);
}

CqlError not_connected() {
  return CqlError{CqlErrc::kClosed, "session is not connected"};
}

qim_cql_exec_opts to_c(const ExecOptions& o) {
  qim_cql_exec_opts c;
  qim_cql_exec_opts_init(&c);
  c.consistency = static_cast<int32_t>(o.consistency);
  c.serial_consistency = static_cast<int32_t>(o.serial_consistency);
  c.timestamp_us = o.timestamp_us;
  c.page_size = o.page_size;
  c.max_rows = o.max_rows;
  c.paging_state = o.paging_state.empty() ? nullptr : o.paging_state.data();
  c.paging_state_len = o.paging_state.size();
  c.timeout_ms = o.timeout_ms;
  c.idempotent = o.idempotent ? 1 : 0;
  return c;
}

using Promise = std::promise<Result<Rows>>;

// The completion callback handed to every *_async call: fulfils the promise and frees it.
extern "C" void qim_cql_cpp_complete(void* user_data, qim_cql_result* result) noexcept {
  std::unique_ptr<Promise> promise(static_cast<Promise*>(user_data));
  try {
    promise->set_value(to_result(result));
  } catch (...) {
    // Only allocation failure can land here; the future then reports a broken promise.
  }
}

// Starts an async call: `start(callback, user_data, err)` returns the qim_cql status code.
template <class Start>
PendingResult start_async(Start&& start) {
  auto promise = std::make_unique<Promise>();
  PendingResult pending(promise->get_future().share());
  qim_cql_error err{QIM_CQL_OK, nullptr};
  const int32_t rc = start(&qim_cql_cpp_complete, static_cast<void*>(promise.get()), &err);
  if (rc == QIM_CQL_OK) {
    promise.release();  // owned by the callback now
  } else {
    promise->set_value(Result<Rows>(take_error(rc, err)));
  }
  return pending;
}

}  // namespace

// ---- errors --------------------------------------------------------------------------------------

std::string_view errc_name(CqlErrc code) noexcept {
  switch (code) {
    case CqlErrc::kOk:
      return "OK";
    case CqlErrc::kConnect:
      return "CONNECT";
    case CqlErrc::kTimeout:
      return "TIMEOUT";
    case CqlErrc::kUnavailable:
      return "UNAVAILABLE";
    case CqlErrc::kInvalid:
      return "INVALID";
    case CqlErrc::kWriteTimeout:
      return "WRITE_TIMEOUT";
    case CqlErrc::kReadTimeout:
      return "READ_TIMEOUT";
    case CqlErrc::kOverloaded:
      return "OVERLOADED";
    case CqlErrc::kClosed:
      return "CLOSED";
    case CqlErrc::kBadArg:
      return "BAD_ARG";
    case CqlErrc::kNull:
      return "NULL";
    case CqlErrc::kOther:
      return "OTHER";
  }
  return "UNKNOWN";
}

std::string CqlError::to_string() const {
  std::string s(errc_name(code));
  if (!message.empty()) {
    s += ": ";
    s += message;
  }
  return s;
}

std::optional<Consistency> parse_consistency(std::string_view name) noexcept {
  std::string up;
  up.reserve(name.size());
  for (char ch : name) up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(ch))));
  static constexpr std::pair<std::string_view, Consistency> kNames[] = {
      {"DEFAULT", Consistency::kDefault},
      {"ANY", Consistency::kAny},
      {"ONE", Consistency::kOne},
      {"TWO", Consistency::kTwo},
      {"THREE", Consistency::kThree},
      {"QUORUM", Consistency::kQuorum},
      {"ALL", Consistency::kAll},
      {"LOCAL_QUORUM", Consistency::kLocalQuorum},
      {"EACH_QUORUM", Consistency::kEachQuorum},
      {"LOCAL_ONE", Consistency::kLocalOne},
      {"SERIAL", Consistency::kSerial},
      {"LOCAL_SERIAL", Consistency::kLocalSerial},
  };
  for (const auto& [n, c] : kNames) {
    if (up == n) return c;
  }
  return std::nullopt;
}

// ---- values ----------------------------------------------------------------------------------------

Values& Values::push(Item item) {
  items_.push_back(std::move(item));
  return *this;
}

Values& Values::null() {
  return push(Item{QIM_CQL_VALUE_NULL, 0, {}, {}});
}
Values& Values::unset() {
  return push(Item{QIM_CQL_VALUE_UNSET, 0, {}, {}});
}
Values& Values::bigint(int64_t v) {
  return push(Item{QIM_CQL_VALUE_BIGINT, v, {}, {}});
}
Values& Values::int32(int32_t v) {
  return push(Item{QIM_CQL_VALUE_INT, v, {}, {}});
}
Values& Values::smallint(int16_t v) {
  return push(Item{QIM_CQL_VALUE_SMALLINT, v, {}, {}});
}
Values& Values::boolean(bool v) {
  return push(Item{QIM_CQL_VALUE_BOOLEAN, v ? 1 : 0, {}, {}});
}
Values& Values::text(std::string_view utf8) {
  return push(Item{QIM_CQL_VALUE_TEXT, 0, std::string(utf8), {}});
}
Values& Values::blob(std::span<const uint8_t> bytes) {
  return push(Item{
      QIM_CQL_VALUE_BLOB, 0, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), {}});
}
Values& Values::blob(std::string_view bytes) {
  return push(Item{QIM_CQL_VALUE_BLOB, 0, std::string(bytes), {}});
}
Values& Values::bigint_list(std::span<const int64_t> items) {
  return push(Item{QIM_CQL_VALUE_LIST_BIGINT, 0, {}, std::vector<int64_t>(items.begin(), items.end())});
}

Values& Values::text_list(std::span<const std::string> items) {
  Item item{QIM_CQL_VALUE_LIST_TEXT, 0, {}, {}};
  item.texts.assign(items.begin(), items.end());
  return push(std::move(item));
}

size_t Values::wire_bytes() const noexcept {
  size_t n = 0;
  for (const Item& it : items_) {
    n += 4 + it.bytes.size() + 8 * it.list.size();
    for (const std::string& t : it.texts) n += 4 + t.size();
    if (it.kind != QIM_CQL_VALUE_TEXT && it.kind != QIM_CQL_VALUE_BLOB && it.list.empty() && it.texts.empty())
      n += 8;
  }
  return n;
}

std::vector<qim_cql_value> Values::raw() const {
  std::vector<qim_cql_value> out;
  out.reserve(items_.size());
  for (const Item& it : items_) {
    qim_cql_value v{it.kind, it.i64, nullptr, 0};
    if (it.kind == QIM_CQL_VALUE_TEXT || it.kind == QIM_CQL_VALUE_BLOB) {
      v.ptr = it.bytes.data();
      v.len = it.bytes.size();
    } else if (it.kind == QIM_CQL_VALUE_LIST_BIGINT) {
      v.ptr = it.list.data();
      v.len = it.list.size();
    } else if (it.kind == QIM_CQL_VALUE_LIST_TEXT) {
      // Made here, not in text_list: moving an Item may move a short string's bytes.
      it.text_views.clear();
      for (const std::string& t : it.texts)
        it.text_views.push_back({QIM_CQL_VALUE_TEXT, 0, t.data(), t.size()});
      v.ptr = it.text_views.data();
      v.len = it.text_views.size();
    }
    out.push_back(v);
  }
  return out;
}

// ---- rows --------------------------------------------------------------------------------------------

bool Row::is_null(size_t col) const noexcept {
  return qim_cql_result_is_null(result_, row_, col) != 0;
}

namespace {
template <class T, class Get>
Result<T> get_cell(const qim_cql_result* r, size_t row, size_t col, Get get) {
  T out{};
  const int32_t rc = get(r, row, col, &out);
  if (rc == QIM_CQL_OK) return out;
  if (rc == QIM_CQL_ERR_NULL) return CqlError{CqlErrc::kNull, "column " + std::to_string(col) + " is null"};
  const int32_t type = qim_cql_result_column_type(r, col);
  if (type == QIM_CQL_TYPE_INVALID || row >= qim_cql_result_row_count(r)) {
    return CqlError{CqlErrc::kBadArg,
                    "row " + std::to_string(row) + " column " + std::to_string(col) + " is out of range"};
  }
  return CqlError{CqlErrc::kBadArg, "column " + std::to_string(col) + " (" +
                                        std::string(qim_cql_result_column_name(r, col)) +
                                        ") has another type (" + std::to_string(type) + ")"};
}
}  // namespace

Result<int64_t> Row::get_i64(size_t col) const {
  return get_cell<int64_t>(result_, row_, col, qim_cql_result_get_i64);
}
Result<int32_t> Row::get_i32(size_t col) const {
  return get_cell<int32_t>(result_, row_, col, qim_cql_result_get_i32);
}
Result<bool> Row::get_bool(size_t col) const {
  return get_cell<bool>(result_, row_, col, qim_cql_result_get_bool);
}
Result<std::string_view> Row::get_text(size_t col) const {
  size_t len = 0;
  auto r = get_cell<const char*>(result_, row_, col,
                                 [&len](const qim_cql_result* res, size_t row, size_t c, const char** out) {
                                   return qim_cql_result_get_text(res, row, c, out, &len);
                                 });
  if (!r) return r.error();
  return std::string_view(*r, len);
}
Result<std::span<const uint8_t>> Row::get_blob(size_t col) const {
  size_t len = 0;
  auto r = get_cell<const uint8_t*>(
      result_, row_, col, [&len](const qim_cql_result* res, size_t row, size_t c, const uint8_t** out) {
        return qim_cql_result_get_blob(res, row, c, out, &len);
      });
  if (!r) return r.error();
  return std::span<const uint8_t>(*r, len);
}
Result<std::span<const int64_t>> Row::get_i64_list(size_t col) const {
  size_t len = 0;
  auto r = get_cell<const int64_t*>(
      result_, row_, col, [&len](const qim_cql_result* res, size_t row, size_t c, const int64_t** out) {
        return qim_cql_result_get_i64_list(res, row, c, out, &len);
      });
  if (!r) return r.error();
  return std::span<const int64_t>(*r, len);
}

std::string Row::render(size_t col) const {
  char small[128];
  const size_t n = qim_cql_result_render(result_, row_, col, small, sizeof small);
  if (n < sizeof small) return std::string(small, n);
  std::string big(n + 1, '\0');
  qim_cql_result_render(result_, row_, col, big.data(), big.size());
  big.resize(n);
  return big;
}

size_t Rows::size() const noexcept {
  return qim_cql_result_row_count(result_.get());
}
size_t Rows::column_count() const noexcept {
  return qim_cql_result_column_count(result_.get());
}

std::string_view Rows::column_name(size_t col) const noexcept {
  const char* n = qim_cql_result_column_name(result_.get(), col);
  return n != nullptr ? std::string_view(n) : std::string_view();
}

ColumnType Rows::column_type(size_t col) const noexcept {
  return static_cast<ColumnType>(qim_cql_result_column_type(result_.get(), col));
}

std::optional<size_t> Rows::column_index(std::string_view name) const {
  const std::string n(name);
  const int64_t i = qim_cql_result_column_index(result_.get(), n.c_str());
  if (i < 0) return std::nullopt;
  return static_cast<size_t>(i);
}

std::optional<bool> Rows::applied() const {
  const auto col = column_index("[applied]");
  if (!col || empty()) return std::nullopt;
  auto v = row(0).get_bool(*col);
  if (!v) return std::nullopt;
  return *v;
}

bool Rows::has_more_pages() const noexcept {
  return qim_cql_result_paging_state(result_.get(), nullptr, nullptr) == 1;
}

PagingState Rows::paging_state() const {
  const uint8_t* p = nullptr;
  size_t len = 0;
  if (qim_cql_result_paging_state(result_.get(), &p, &len) != 1 || p == nullptr) return {};
  return PagingState(p, p + len);
}

// ---- batch / pending -------------------------------------------------------------------------------

Batch& Batch::add(const Prepared& statement, Values values) {
  items_.emplace_back(&statement, std::move(values));
  return *this;
}

PendingResult PendingResult::completed(Result<Rows> result) {
  std::promise<Result<Rows>> p;
  PendingResult out(p.get_future().share());
  p.set_value(std::move(result));
  return out;
}

Status wait_all(std::span<const PendingResult> pending) {
  std::optional<CqlError> first;
  for (const PendingResult& p : pending) {
    if (!p.valid()) {
      if (!first) first = CqlError{CqlErrc::kBadArg, "wait_all: invalid PendingResult"};
      continue;
    }
    const Result<Rows>& r = p.get();
    if (!r && !first) first = r.error();
  }
  if (first) return *first;
  return {};
}

// ---- session ---------------------------------------------------------------------------------------

std::vector<std::string> split_hosts(std::string_view csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t end = csv.find(',', start);
    if (end == std::string_view::npos) end = csv.size();
    std::string_view item = csv.substr(start, end - start);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

Result<Session> Session::connect(const SessionOptions& options) {
  std::vector<const char*> hosts;
  hosts.reserve(options.hosts.size());
  for (const auto& h : options.hosts) hosts.push_back(h.c_str());
  qim_cql_session* s = nullptr;
  qim_cql_error err{QIM_CQL_OK, nullptr};
  const int32_t rc = qim_cql_connect(hosts.data(), hosts.size(),
                                     options.local_dc.empty() ? nullptr : options.local_dc.c_str(),
                                     options.request_timeout_ms, &s, &err);
  if (rc != QIM_CQL_OK) return take_error(rc, err);
  return Session(s);
}

Result<Prepared> Session::prepare(std::string_view cql) const {
  if (!s_) return not_connected();
  const std::string text(cql);
  qim_cql_prepared* p = nullptr;
  qim_cql_error err{QIM_CQL_OK, nullptr};
  const int32_t rc = qim_cql_prepare(s_.get(), text.c_str(), &p, &err);
  if (rc != QIM_CQL_OK) return take_error(rc, err);
  return Prepared(p);
}

Result<Rows> Session::execute(const Prepared& statement, const Values& values,
                              const ExecOptions& options) const {
  if (!s_) return not_connected();
  const auto raw = values.raw();
  const auto opts = to_c(options);
  return to_result(qim_cql_execute(s_.get(), statement.raw(), raw.data(), raw.size(), &opts));
}

PendingResult Session::execute_async(const Prepared& statement, const Values& values,
                                     const ExecOptions& options) const {
  if (!s_) return PendingResult::completed(not_connected());
  const auto raw = values.raw();
  const auto opts = to_c(options);
  return start_async([&](qim_cql_callback cb, void* ud, qim_cql_error* err) {
    return qim_cql_execute_async(s_.get(), statement.raw(), raw.data(), raw.size(), &opts, cb, ud, err);
  });
}

Result<Rows> Session::query(std::string_view cql, const Values& values, const ExecOptions& options) const {
  if (!s_) return not_connected();
  const std::string text(cql);
  const auto raw = values.raw();
  const auto opts = to_c(options);
  return to_result(qim_cql_query(s_.get(), text.c_str(), raw.data(), raw.size(), &opts));
}

PendingResult Session::query_async(std::string_view cql, const Values& values,
                                   const ExecOptions& options) const {
  if (!s_) return PendingResult::completed(not_connected());
  const std::string text(cql);
  const auto raw = values.raw();
  const auto opts = to_c(options);
  return start_async([&](qim_cql_callback cb, void* ud, qim_cql_error* err) {
    return qim_cql_query_async(s_.get(), text.c_str(), raw.data(), raw.size(), &opts, cb, ud, err);
  });
}

namespace {
// The C view of a batch; keeps the values' C arrays alive while in scope.
struct CBatch {
  std::vector<std::vector<qim_cql_value>> values;
  std::vector<qim_cql_batch_item> items;
};

template <class Items>
CBatch to_c_batch(const Items& items) {
  CBatch b;
  b.values.reserve(items.size());
  b.items.reserve(items.size());
  for (const auto& [prepared, values] : items) {
    b.values.push_back(values.raw());
    b.items.push_back(qim_cql_batch_item{prepared != nullptr ? prepared->raw() : nullptr,
                                         b.values.back().data(), b.values.back().size()});
  }
  return b;
}
}  // namespace

Result<Rows> Session::batch(const Batch& batch, const ExecOptions& options) const {
  if (!s_) return not_connected();
  const CBatch b = to_c_batch(batch.items_);
  const auto opts = to_c(options);
  return to_result(
      qim_cql_batch(s_.get(), static_cast<int32_t>(batch.type_), b.items.data(), b.items.size(), &opts));
}

PendingResult Session::batch_async(const Batch& batch, const ExecOptions& options) const {
  if (!s_) return PendingResult::completed(not_connected());
  const CBatch b = to_c_batch(batch.items_);
  const auto opts = to_c(options);
  return start_async([&](qim_cql_callback cb, void* ud, qim_cql_error* err) {
    return qim_cql_batch_async(s_.get(), static_cast<int32_t>(batch.type_), b.items.data(), b.items.size(),
                               &opts, cb, ud, err);
  });
}

}  // namespace qim::cql
