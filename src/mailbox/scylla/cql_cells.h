#pragma once
// Reading typed cells of stored rows: a cell that is missing, of the wrong type or out of range is a
// CorruptEntry naming the column.

#include <string>

#include "core/status.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim::scylla {

template <typename T>
Result<T> cell(cql::Result<T> r, const char* column) {
  if (!r.ok()) return Error(Errc::kCorruptEntry, std::string(column) + ": " + r.error().to_string());
  return std::move(r).value();
}

// A text cell holding a validated name (UserId, ConversationId, ...). Optional: NULL or "" reads as empty.
template <typename N>
Result<N> name_cell(const cql::Row& row, size_t col, const char* column, bool optional = false) {
  auto text = row.get_text(col);
  if (!text.ok()) {
    if (optional && text.code() == cql::CqlErrc::kNull) return N{};
    return Error(Errc::kCorruptEntry, std::string(column) + ": " + text.error().to_string());
  }
  if (optional && text->empty()) return N{};
  auto parsed = N::parse(*text);
  if (!parsed.ok()) return Error(Errc::kCorruptEntry, std::string(column) + ": " + parsed.error().message());
  return std::move(parsed).value();
}

}  // namespace qim::scylla
