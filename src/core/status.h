#pragma once
// Error values of QIM. Every failure a caller may want to react to is an Errc it can match; nothing the
// store contract names is ever thrown or swallowed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace qim {

enum class Errc : uint8_t {
  kInvalidArgument,    // the caller passed something malformed (offset >= 2^48, unknown lane, ...)
  kInvariant,          // a rule of the contract was broken by the caller (e.g. independent lane advance)
  kCorruptEntry,       // a stored row does not decode or fails its check (e.g. WRITETIME != frontier)
  kDispatchConflict,   // same dispatch id observed with another digest or manifest
  kWatermarkGap,       // an advance does not chain onto the current frontier
  kEpochAhead,         // the store holds a frontier of a higher epoch than this owner's
  kIncomplete,         // finish before every chunk of the manifest was written
  kExpiredCursor,      // a cursor below the user's trim
  kProofMissing,       // an expired retention bucket has no proof row: fail closed
  kNotFound,           // the thing asked for does not exist
  kTransport,          // the backend could not be reached or answered with an error
  kTimeout,            // the backend did not answer in time
  kUnauthenticated,    // bad or expired token
  kPermissionDenied,   // authenticated, but not allowed to touch this
  kResourceExhausted,  // a size or rate bound was hit
  kIo,                 // local disk or file error
  kConfig,             // bad configuration
};

std::string_view errc_name(Errc code);

// An error: a code to match and a message that names the problem.
class Error {
 public:
  Error(Errc code, std::string message) : code_(code), message_(std::move(message)) {}
  Errc code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;  // "DispatchConflict: dispatch d1 seen with another digest"

 private:
  Errc code_;
  std::string message_;
};

// Result<T> holds a T or an Error. Result<void> (alias Status) holds nothing or an Error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Errc code() const { return error().code(); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : e_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *e_; }
  Errc code() const { return e_->code(); }

 private:
  std::optional<Error> e_;
};

using Status = Result<void>;

inline Status ok_status() {
  return {};
}

}  // namespace qim

// Propagate an error from an expression yielding Result<...> / Status.
#define QIM_RETURN_IF_ERROR(expr)                      \
  do {                                                 \
    auto qim_status_ = (expr);                         \
    if (!qim_status_.ok()) return qim_status_.error(); \
  } while (0)

#define QIM_CONCAT_INNER_(a, b) a##b
#define QIM_CONCAT_(a, b) QIM_CONCAT_INNER_(a, b)
// Declare `lhs` from the value of a Result, or return its error.
#define QIM_ASSIGN_OR_RETURN(lhs, expr) \
  QIM_ASSIGN_OR_RETURN_IMPL_(QIM_CONCAT_(qim_result_, __LINE__), lhs, expr)
#define QIM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.error();               \
  lhs = std::move(tmp).value()
