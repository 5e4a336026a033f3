#pragma once
// CQL client errors as QIM error values: the store contract reports transport trouble as Transport or
// Timeout, naming the statement that failed.

#include <string>
#include <string_view>

#include "core/status.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim::scylla {

inline Error to_error(const cql::CqlError& e, std::string_view what) {
  Errc code = Errc::kTransport;
  switch (e.code) {
    case cql::CqlErrc::kTimeout:
    case cql::CqlErrc::kWriteTimeout:
    case cql::CqlErrc::kReadTimeout:
      code = Errc::kTimeout;
      break;
    case cql::CqlErrc::kInvalid:
    case cql::CqlErrc::kBadArg:
      code = Errc::kInvalidArgument;
      break;
    default:
      break;
  }
  return Error(code, std::string(what) + ": " + e.to_string());
}

template <typename T>
Result<T> lift(cql::Result<T> r, std::string_view what) {
  if (!r.ok()) return to_error(r.error(), what);
  return std::move(r).value();
}

inline Status lift(const cql::Status& s, std::string_view what) {
  if (!s.ok()) return to_error(s.error(), what);
  return {};
}

}  // namespace qim::scylla
