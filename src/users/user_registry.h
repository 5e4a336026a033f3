#pragma once
// The optional user registry (issue 40 item 4, docs/api.md "Users", docs/adr/0121): the app creates,
// updates and deletes its users through the server API; with QIM_USER_REGISTRY=1 a direct SEND or a group
// add naming a user the registry does not hold is refused UNKNOWN_USER, and a deleted user's sessions are
// revoked. Off (the default), nothing consults it and any name works.
//
// Stored as last-writer-wins cells (UserCells): each write carries its server time, and a cell is only
// replaced by a write of a later time, so two writers racing (two API requests, two gateways) converge on
// the later one. A user's cell holds its record or a tombstone. Ids stay case-sensitive, but a new id whose
// case-folded form belongs to another live user is refused (look-alike ids: "Alice" beside "alice").
//
// The registry keeps every live user in memory (loaded at open, updated by each write through it and, in
// a distributed deployment, by refresh() from the other gateways' writes: UserRegistryFollower), so the
// send path's exists() is a lookup that never touches the disk or the network. Thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/ids.h"
#include "core/status.h"

namespace qim {

struct UserRecord {
  UserId id;
  std::string display_name;  // 0..128 bytes
  std::string avatar_url;    // 0..2048 bytes
  int64_t updated_ms = 0;    // the write's server time (the cell's last-writer-wins stamp)
  bool deleted = false;      // a tombstone
  bool operator==(const UserRecord&) const = default;
};

inline constexpr size_t kMaxDisplayNameBytes = 128;
inline constexpr size_t kMaxAvatarUrlBytes = 2048;

// What changed in the cells since a cursor (UserCells::changed_since).
struct UserCellChanges {
  std::vector<std::string> values;  // the current value of each cell written after the cursor, any order
  int64_t cursor = 0;               // ask from here next time
  bool everything = false;          // `values` are every cell (cursor 0, or the cells forgot the cursor)
};

// Where the cells live. A cell is (key, stamp, value); put() replaces a cell only with a later stamp.
// Several registries (one per gateway of a distributed deployment) may share one set of cells: each
// follows the others' writes through changed_since().
class UserCells {
 public:
  virtual ~UserCells() = default;
  // Writes (key, stamp, value) unless the cell holds a stamp >= `stamp`; true if written. Io / Transport.
  virtual Result<bool> put(const std::string& key, int64_t stamp, const std::string& value) = 0;
  // The cells written after `cursor` (0: every cell, `everything` set). A cursor the cells no longer know
  // (a Redis that restarted empty) also answers every cell. Io / Transport.
  virtual Result<UserCellChanges> changed_since(int64_t cursor) = 0;
};

// In memory (tests); one set of cells may serve several registries (share_user_cells).
std::unique_ptr<UserCells> make_memory_user_cells();
// Another handle on the same cells as `cells` (which must outlive it): a second gateway's view in tests.
std::unique_ptr<UserCells> share_user_cells(UserCells& cells);
// RocksDB in `dir` (created if missing); Io if it cannot be opened. One process writes the directory, so
// after the first load there is nothing to follow: changed_since(cursor > 0) answers no change.
Result<std::unique_ptr<UserCells>> open_rocks_user_cells(const std::string& dir);

// The case-folded form of an id (ASCII lowercase: ids are ASCII, core/ids.h).
std::string fold_user_id(std::string_view id);

class UserRegistry {
 public:
  // Loads every cell. Io / CorruptEntry from the cells.
  static Result<std::unique_ptr<UserRegistry>> open(std::unique_ptr<UserCells> cells,
                                                    std::shared_ptr<const Clock> clock);

  enum class Refusal { kNone, kExists, kLookAlike, kNotFound, kTooLong };
  struct Outcome {
    Refusal refusal = Refusal::kNone;
    std::string message;  // names the problem when refused
    UserRecord record;    // the stored record when not refused
  };
  // A new user. kExists (the id is live), kLookAlike (another live id folds the same), kTooLong.
  Result<Outcome> create(const UserId& id, std::string display_name, std::string avatar_url);
  // Changes the fields given. kNotFound, kTooLong.
  Result<Outcome> update(const UserId& id, std::optional<std::string> display_name,
                         std::optional<std::string> avatar_url);
  // Deletes the user (a tombstone). kNotFound.
  Result<Outcome> remove(const UserId& id);
  // The live user, or nullopt.
  std::optional<UserRecord> get(const UserId& id) const;
  bool exists(const UserId& id) const { return get(id).has_value(); }
  // Live users with ids after `after` (empty: from the first), at most `limit`, in id order.
  std::vector<UserRecord> list(const std::string& after, size_t limit) const;
  // Takes in what other registries wrote to the cells since the last refresh (or the open): a record
  // replaces the view's only if its stamp is not older, so a refresh racing a write through this registry
  // never undoes it. The view is unchanged on error (the cells' Transport / Io, CorruptEntry).
  Status refresh();

 private:
  UserRegistry(std::unique_ptr<UserCells> cells, std::shared_ptr<const Clock> clock)
      : cells_(std::move(cells)), clock_(std::move(clock)) {}
  Result<UserRecord> write(UserRecord record);    // under mu_
  void apply(UserRecord record);                  // under mu_: into the view, unless older than it holds
  int64_t stamp_of(const std::string& id) const;  // under mu_: the view's stamp of `id` (live or deleted)

  std::unique_ptr<UserCells> cells_;
  std::shared_ptr<const Clock> clock_;
  mutable std::mutex mu_;
  std::map<std::string, UserRecord> users_;    // live users by id
  std::map<std::string, std::string> folded_;  // fold_user_id -> the live id
  std::map<std::string, int64_t> tombstones_;  // deleted ids -> their deletion's stamp
  int64_t cursor_ = 0;                         // UserCells::changed_since
  std::mutex refresh_mu_;                      // one refresh at a time (not held by the send path)
};

// The cell value of a record and back (CorruptEntry naming the field).
std::string encode_user_record(const UserRecord& r);
Result<UserRecord> decode_user_record(std::string_view bytes);

}  // namespace qim
