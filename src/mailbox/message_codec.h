#pragma once
// Byte encodings of messages and dispatch records, shared by the mailbox log and the stores that keep
// entries as bytes (embedded, redis). Decoders return CorruptEntry naming the bad field.

#include <string>
#include <string_view>

#include "mailbox/dispatch.h"
#include "mailbox/message.h"

namespace qim {

std::string encode_message(const Message& m);
Result<Message> decode_message(std::string_view bytes);

// A dispatch record as fanout appends it to the mailbox log.
std::string encode_dispatch_record(const DispatchRecord& r);
Result<DispatchRecord> decode_dispatch_record(std::string_view bytes);

}  // namespace qim
