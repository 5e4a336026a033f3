#pragma once
// Opening a data directory written before decision 88: the inbox had a RocksDB database of its own in
// QIM_DATA_DIR/inbox (decision 69). Its rows are moved, not rebuilt: read marks, receipts and settings are
// not functions of the mailbox and could not be rebuilt from it.
//
// The move copies every row into the mailbox database's inbox families (index rows as puts, the max cells
// as max merges, so a copy repeated after a crash changes nothing), waits for the mailbox's log sync, then
// renames the directory to `<dir>.moved` and removes it. A `<dir>.moved` found at the start is the end of
// a finished move that a crash interrupted: it is removed.

#include <string>

#include "core/status.h"
#include "mailbox/embedded/side_rows.h"

namespace qim {

// Nothing if `dir` is empty or absent. Io naming the directory when it cannot be read, renamed or
// removed; CorruptEntry when it holds something that is not the old inbox (a family it never had).
Status move_legacy_inbox(const std::string& dir, const embedded::SideDb& db);

}  // namespace qim
