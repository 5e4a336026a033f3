#pragma once
// A write a backend started and returned before it finished (store_backend.h: ClaimAnswer::pending), so
// that its round trip overlaps the next ones. Whoever relies on the write being stored waits for it.

#include "core/status.h"

namespace qim {

class PendingWrite {
 public:
  virtual ~PendingWrite() = default;
  // Blocks until the write is done and returns its outcome, the same on every call. Thread-safe.
  virtual Status wait() = 0;
};

}  // namespace qim
