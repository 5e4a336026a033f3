#pragma once
// The client's reading of the inbox frames (docs/protocol.md "Inbox"), apart from frames.cc: fills the
// inbox fields of ServerFrame from a parsed server frame (fields a frame does not carry stay empty).

#include <simdjson.h>

#include "client/frames.h"

namespace qim::client {

void read_inbox_fields(const simdjson::dom::object& o, ServerFrame& f);

}  // namespace qim::client
