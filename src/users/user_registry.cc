// The user registry's rules (user_registry.h): one place for create / update / delete and the look-alike
// check, over any UserCells backend.
#include "users/user_registry.h"

#include <algorithm>
#include <climits>

#include "core/big_endian.h"

namespace qim {

namespace {

constexpr char kVersion = 1;

void put_text(std::string& out, std::string_view s) {
  put_be64(out, s.size());
  out.append(s);
}

bool take_text(std::string_view& in, std::string& out) {
  if (in.size() < 8) return false;
  const uint64_t n = get_be64(in);
  in.remove_prefix(8);
  if (n > in.size()) return false;
  out.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

std::string cell_key(const UserId& id) {
  return "u/" + id.str();
}

}  // namespace

std::string fold_user_id(std::string_view id) {
  std::string out(id);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return out;
}

std::string encode_user_record(const UserRecord& r) {
  std::string out(1, kVersion);
  put_be64(out, static_cast<uint64_t>(r.updated_ms));
  out.push_back(r.deleted ? 1 : 0);
  put_text(out, r.id.str());
  put_text(out, r.display_name);
  put_text(out, r.avatar_url);
  return out;
}

Result<UserRecord> decode_user_record(std::string_view in) {
  auto corrupt = [](const char* field) {
    return Error(Errc::kCorruptEntry, std::string("user record: ") + field);
  };
  if (in.size() < 10 || in[0] != kVersion) return corrupt("version");
  in.remove_prefix(1);
  UserRecord r;
  r.updated_ms = static_cast<int64_t>(get_be64(in));
  in.remove_prefix(8);
  r.deleted = in[0] != 0;
  in.remove_prefix(1);
  std::string id;
  if (!take_text(in, id)) return corrupt("id");
  auto parsed = UserId::parse(id);
  if (!parsed.ok()) return corrupt("id");
  r.id = *parsed;
  if (!take_text(in, r.display_name)) return corrupt("display_name");
  if (!take_text(in, r.avatar_url)) return corrupt("avatar_url");
  if (!in.empty()) return corrupt("trailing bytes");
  return r;
}

Result<std::unique_ptr<UserRegistry>> UserRegistry::open(std::unique_ptr<UserCells> cells,
                                                         std::shared_ptr<const Clock> clock) {
  std::unique_ptr<UserRegistry> r(new UserRegistry(std::move(cells), std::move(clock)));
  QIM_RETURN_IF_ERROR(r->refresh());  // from cursor 0: every cell
  return r;
}

int64_t UserRegistry::stamp_of(const std::string& id) const {
  if (auto it = users_.find(id); it != users_.end()) return it->second.updated_ms;
  if (auto it = tombstones_.find(id); it != tombstones_.end()) return it->second;
  return INT64_MIN;
}

void UserRegistry::apply(UserRecord record) {
  const std::string id = record.id.str();
  if (record.updated_ms < stamp_of(id)) return;  // the view holds a later write (ours, or one seen before)
  const std::string folded = fold_user_id(id);
  if (auto it = users_.find(id); it != users_.end()) {
    if (auto f = folded_.find(folded); f != folded_.end() && f->second == id) folded_.erase(f);
    users_.erase(it);
  }
  if (record.deleted) {
    tombstones_[id] = record.updated_ms;
  } else {
    tombstones_.erase(id);
    folded_[folded] = id;
    users_[id] = std::move(record);
  }
}

Status UserRegistry::refresh() {
  std::lock_guard one(refresh_mu_);
  int64_t cursor = 0;
  {
    std::lock_guard lock(mu_);
    cursor = cursor_;
  }
  // The read and the decoding outside mu_: the send path's lookups do not wait for the cells.
  QIM_ASSIGN_OR_RETURN(UserCellChanges changes, cells_->changed_since(cursor));
  std::vector<UserRecord> records;
  records.reserve(changes.values.size());
  for (const std::string& v : changes.values) {
    QIM_ASSIGN_OR_RETURN(UserRecord rec, decode_user_record(v));
    records.push_back(std::move(rec));
  }
  std::lock_guard lock(mu_);
  if (changes.everything) {
    // Every cell after a cursor the cells forgot (a Redis that restarted empty): users the view holds but
    // the cells do not are forgotten here too. (One created through this registry while the read ran is
    // dropped from this view until the next write of it: the cells lost their writes anyway.)
    std::map<std::string, bool> in_cells;
    for (const UserRecord& rec : records) in_cells[rec.id.str()] = true;
    for (auto it = users_.begin(); it != users_.end();) {
      if (!in_cells.contains(it->first) && cursor != 0) {
        if (auto f = folded_.find(fold_user_id(it->first)); f != folded_.end() && f->second == it->first)
          folded_.erase(f);
        it = users_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (UserRecord& rec : records) apply(std::move(rec));
  cursor_ = changes.cursor;
  return {};
}

Result<UserRecord> UserRegistry::write(UserRecord record) {
  // A stamp after every earlier write this registry knows of for the user, even if the clock stepped back.
  int64_t stamp = clock_->now_ms();
  if (const int64_t known = stamp_of(record.id.str()); known != INT64_MIN) stamp = std::max(stamp, known + 1);
  record.updated_ms = stamp;
  QIM_ASSIGN_OR_RETURN(bool written, cells_->put(cell_key(record.id), stamp, encode_user_record(record)));
  // Not written: another registry's later write won. Ours goes into the view all the same (as if it came
  // first); the next refresh brings the winner, whose stamp is later.
  (void)written;
  apply(record);
  return record;
}

Result<UserRegistry::Outcome> UserRegistry::create(const UserId& id, std::string display_name,
                                                   std::string avatar_url) {
  Outcome out;
  if (display_name.size() > kMaxDisplayNameBytes || avatar_url.size() > kMaxAvatarUrlBytes) {
    out.refusal = Refusal::kTooLong;
    out.message = "display_name is at most " + std::to_string(kMaxDisplayNameBytes) + " bytes, avatar_url " +
                  std::to_string(kMaxAvatarUrlBytes);
    return out;
  }
  std::lock_guard lock(mu_);
  if (users_.contains(id.str())) {
    out.refusal = Refusal::kExists;
    out.message = "user '" + id.str() + "' exists";
    return out;
  }
  if (auto f = folded_.find(fold_user_id(id.str())); f != folded_.end()) {
    out.refusal = Refusal::kLookAlike;
    out.message = "user '" + id.str() + "' differs from the existing user '" + f->second +
                  "' only in case (look-alike ids are refused)";
    return out;
  }
  QIM_ASSIGN_OR_RETURN(out.record,
                       write(UserRecord{id, std::move(display_name), std::move(avatar_url), 0, false}));
  return out;
}

Result<UserRegistry::Outcome> UserRegistry::update(const UserId& id, std::optional<std::string> display_name,
                                                   std::optional<std::string> avatar_url) {
  Outcome out;
  if ((display_name && display_name->size() > kMaxDisplayNameBytes) ||
      (avatar_url && avatar_url->size() > kMaxAvatarUrlBytes)) {
    out.refusal = Refusal::kTooLong;
    out.message = "display_name is at most " + std::to_string(kMaxDisplayNameBytes) + " bytes, avatar_url " +
                  std::to_string(kMaxAvatarUrlBytes);
    return out;
  }
  std::lock_guard lock(mu_);
  auto it = users_.find(id.str());
  if (it == users_.end()) {
    out.refusal = Refusal::kNotFound;
    out.message = "no user '" + id.str() + "'";
    return out;
  }
  UserRecord r = it->second;
  if (display_name) r.display_name = std::move(*display_name);
  if (avatar_url) r.avatar_url = std::move(*avatar_url);
  QIM_ASSIGN_OR_RETURN(out.record, write(std::move(r)));
  return out;
}

Result<UserRegistry::Outcome> UserRegistry::remove(const UserId& id) {
  Outcome out;
  std::lock_guard lock(mu_);
  auto it = users_.find(id.str());
  if (it == users_.end()) {
    out.refusal = Refusal::kNotFound;
    out.message = "no user '" + id.str() + "'";
    return out;
  }
  UserRecord r = it->second;
  r.deleted = true;
  r.display_name.clear();
  r.avatar_url.clear();
  QIM_ASSIGN_OR_RETURN(out.record, write(std::move(r)));
  return out;
}

std::optional<UserRecord> UserRegistry::get(const UserId& id) const {
  std::lock_guard lock(mu_);
  auto it = users_.find(id.str());
  if (it == users_.end()) return std::nullopt;
  return it->second;
}

std::vector<UserRecord> UserRegistry::list(const std::string& after, size_t limit) const {
  std::lock_guard lock(mu_);
  std::vector<UserRecord> out;
  for (auto it = users_.upper_bound(after); it != users_.end() && out.size() < limit; ++it)
    out.push_back(it->second);
  return out;
}

}  // namespace qim
