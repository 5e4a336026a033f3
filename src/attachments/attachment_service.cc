#include "attachments/attachment_service.h"

#include <openssl/sha.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "attachments/attachment_id.h"
#include "attachments/thumbnailer.h"

namespace qim::attachments {

namespace {

constexpr uint32_t kListPage = 1000;

Refusal unavailable(const std::string& what, const Error& e) {
  return Refusal{WireCode::kUnavailable, what + ": the object store did not answer: " + e.message()};
}

bool is_sha256_hex(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::optional<Refusal> check_declaration(std::string_view name, std::string_view content_type, uint64_t size,
                                         const std::optional<std::string>& sha256) {
  if (name.empty() || name.size() > kMaxAttachmentNameBytes)
    return Refusal{WireCode::kInvalidArgument,
                   "field 'name' must be 1.." + std::to_string(kMaxAttachmentNameBytes) + " bytes"};
  for (unsigned char c : name)
    if (c < ' ' || c == 0x7f)
      return Refusal{WireCode::kInvalidArgument, "field 'name' holds a control character"};
  if (content_type.empty() || content_type.size() > 127)
    return Refusal{WireCode::kInvalidArgument, "field 'content_type' must be 1..127 bytes"};
  if (size == 0) return Refusal{WireCode::kInvalidArgument, "field 'size' must be at least 1"};
  if (sha256 && !is_sha256_hex(*sha256))
    return Refusal{WireCode::kInvalidArgument, "field 'sha256' must be 64 lower-case hex digits"};
  return std::nullopt;
}

// What a claimed ATTACH declared, as one token (no space: the Redis claim stores it beside the id): the
// sha256 of its fields, each length-prefixed so no two declarations share an encoding.
std::string declaration_digest(const ConversationId& conversation, const UploadRequest& r) {
  std::string text;
  for (std::string_view part :
       {std::string_view(conversation.str()), std::string_view(r.name), std::string_view(r.content_type)}) {
    text += std::to_string(part.size()) + ':';
    text += part;
  }
  text += std::to_string(r.size) + '|' + (r.sha256 ? *r.sha256 : std::string("-"));
  return sha256_hex(text);
}

}  // namespace

std::string_view attachment_kind(std::string_view content_type) {
  for (std::string_view t : {"image/png", "image/jpeg", "image/webp", "image/gif"})
    if (content_type == t) return "image";
  return "file";
}

AttachmentService::AttachmentService(ObjectStore& store, std::string secret, AttachmentOptions options,
                                     std::shared_ptr<const Clock> clock, UploadBudget* budget)
    : store_(store),
      secret_(std::move(secret)),
      options_(std::move(options)),
      clock_(std::move(clock)),
      own_budget_(budget == nullptr ? make_memory_upload_budget() : nullptr),
      budget_(budget == nullptr ? *own_budget_ : *budget) {}

Decided<UploadGrant> AttachmentService::grant_upload(const UserId& uploader,
                                                     const ConversationId& conversation,
                                                     const UploadRequest& r) {
  if (auto bad = check_declaration(r.name, r.content_type, r.size, r.sha256)) return *bad;
  if (!options_.allows(r.content_type))
    return Refusal{WireCode::kUnsupportedType, "content type '" + r.content_type + "' is not allowed here"};
  if (r.size > options_.max_bytes)
    return Refusal{WireCode::kTooLarge, "size " + std::to_string(r.size) + " is over the limit of " +
                                            std::to_string(options_.max_bytes) + " bytes per file"};
  if (r.sha256 && r.size > options_.hash_max_bytes)
    return Refusal{WireCode::kInvalidArgument, "a sha256 is checked only for files of at most " +
                                                   std::to_string(options_.hash_max_bytes) +
                                                   " bytes; omit it"};
  if (r.client_upload_id && !valid_client_upload_id(*r.client_upload_id))
    return Refusal{WireCode::kInvalidArgument, "field 'client_upload_id' must be 1.." +
                                                   std::to_string(kMaxClientUploadIdBytes) +
                                                   " bytes of printable ASCII without spaces"};
  const int64_t now = clock_->now_ms();
  const int64_t expires_at = now + std::chrono::milliseconds(options_.put_ttl).count();
  auto minted = mint_attachment_id(secret_, uploader, conversation);
  if (!minted.ok()) return Refusal{WireCode::kInternal, minted.error().message()};
  // Charged under the object's key (unique per grant), with one `now`: the retry is the same charge, on
  // the same day, and the budget counts it once. A client's id makes it a claim: the budget then answers a
  // repeat of the same declaration with the first grant (upload_budget.h).
  const UploadLimits limits{options_.daily_bytes, options_.daily_uploads};
  const std::string digest = r.client_upload_id ? declaration_digest(conversation, r) : std::string();
  auto charge = [&] {
    if (!r.client_upload_id) return budget_.charge(uploader, minted->key, r.size, now, limits);
    const UploadClaim claim{*r.client_upload_id, digest, minted->id, expires_at};
    return budget_.charge_claimed(uploader, claim, minted->key, r.size, now, limits);
  };
  auto charged = charge();
  if (!charged.ok() && (charged.code() == Errc::kTransport || charged.code() == Errc::kTimeout))
    charged = charge();
  if (!charged.ok()) {
    if (charged.code() == Errc::kTransport || charged.code() == Errc::kTimeout)
      return Refusal{
          WireCode::kUnavailable,
          "ATTACH: the upload budget did not answer (tried twice); nothing was granted, retry later: " +
              charged.error().message()};
    return Refusal{WireCode::kInternal, charged.error().message()};
  }
  if (charged->outcome == BudgetCharge::Outcome::kOverBytes)
    return Refusal{WireCode::kQuotaExceeded, "over the daily upload budget of " +
                                                 std::to_string(options_.daily_bytes) + " bytes (" +
                                                 std::to_string(charged->bytes_used) + " used today, UTC)"};
  if (charged->outcome == BudgetCharge::Outcome::kOverUploads)
    return Refusal{WireCode::kQuotaExceeded, "over the daily upload budget of " +
                                                 std::to_string(options_.daily_uploads) +
                                                 " uploads (all used today, UTC)"};
  if (charged->outcome == BudgetCharge::Outcome::kConflict)
    return Refusal{WireCode::kInvalidArgument,
                   "client_upload_id '" + *r.client_upload_id +
                       "' names another upload (conversation, name, content_type, size or sha256 differ) "
                       "until its grant expires; use a new id for a new upload"};
  UploadGrant g;
  g.attachment = minted->id;
  g.expires_at_ms = expires_at;
  std::string key = minted->key;
  std::chrono::seconds ttl = options_.put_ttl;
  if (r.client_upload_id && charged->attachment != minted->id) {
    // A repeat: the first grant's id, and a URL that expires when the first one does (no longer window
    // to write the object than the first grant gave).
    auto first = key_of_attachment(secret_, charged->attachment, uploader, conversation);
    if (!first) return Refusal{WireCode::kInternal, "ATTACH: a claimed attachment id does not check"};
    key = std::move(*first);
    g.attachment = charged->attachment;
    g.expires_at_ms = charged->expires_at_ms;
    ttl = std::chrono::seconds(std::max<int64_t>((charged->expires_at_ms - now + 999) / 1000, 1));
  }
  auto url = store_.presign_put(key, r.size, r.content_type, ttl);
  if (!url.ok()) return unavailable("ATTACH", url.error());
  g.upload_url = std::move(*url);
  g.headers = {{"Content-Type", r.content_type}, {"Content-Length", std::to_string(r.size)}};
  return g;
}

Decided<std::vector<StoredAttachment>> AttachmentService::check_references(
    const UserId& sender, const ConversationId& conversation, std::span<const AttachmentRef> refs) {
  if (refs.empty()) return Refusal{WireCode::kInvalidArgument, "field 'attachments' must not be empty"};
  if (refs.size() > kMaxAttachmentsPerMessage)
    return Refusal{WireCode::kInvalidArgument,
                   "at most " + std::to_string(kMaxAttachmentsPerMessage) + " attachments per message"};
  std::set<std::string_view> seen;
  std::vector<std::string> keys;
  std::vector<StoredAttachment> out;
  std::vector<std::pair<std::string, std::string>> thumbnails;  // key, jpeg: written once all are checked
  for (const AttachmentRef& ref : refs) {
    if (!seen.insert(ref.attachment).second)
      return Refusal{WireCode::kInvalidArgument, "attachment '" + ref.attachment + "' is named twice"};
    if (auto bad = check_declaration(ref.name, ref.content_type, ref.size, ref.sha256)) return *bad;
    const std::string missing = "attachment '" + ref.attachment.substr(0, 64) +
                                "' is not an upload of yours to this conversation, or was not uploaded";
    auto key = key_of_attachment(secret_, ref.attachment, sender, conversation);
    if (!key) return Refusal{WireCode::kAttachmentMissing, missing};
    auto info = store_.head(*key);
    if (!info.ok()) return unavailable("SEND", info.error());
    if (!*info) return Refusal{WireCode::kAttachmentMissing, missing};
    const ObjectInfo& o = **info;
    if (o.size != ref.size || o.content_type != ref.content_type)
      return Refusal{WireCode::kAttachmentMismatch,
                     "attachment '" + ref.attachment + "' was uploaded as " + std::to_string(o.size) +
                         " bytes of '" + o.content_type + "', not " + std::to_string(ref.size) + " of '" +
                         ref.content_type + "'"};
    if (ref.sha256 && ref.size > options_.hash_max_bytes)
      return Refusal{WireCode::kInvalidArgument, "a sha256 is checked only for files of at most " +
                                                     std::to_string(options_.hash_max_bytes) +
                                                     " bytes; omit it"};
    StoredAttachment a;
    a.ref = ref;
    a.kind = std::string(attachment_kind(ref.content_type));
    // Images up to thumb_max_bytes are read back for their thumbnail (docs/adr/0115); larger ones get none.
    const bool thumbnail = a.kind == "image" && ref.size <= options_.thumb_max_bytes;
    if (ref.sha256 || thumbnail) {
      // One read serves both: its bound is the larger of the two that apply, and the size was just checked.
      auto bytes = store_.get(*key, ref.sha256 ? std::max(options_.hash_max_bytes, ref.size) : ref.size);
      if (!bytes.ok()) {
        if (bytes.code() == Errc::kNotFound) return Refusal{WireCode::kAttachmentMissing, missing};
        if (bytes.code() == Errc::kResourceExhausted)
          return Refusal{WireCode::kAttachmentMismatch,
                         "attachment '" + ref.attachment + "' grew past its size"};
        return unavailable("SEND", bytes.error());
      }
      if (ref.sha256 && sha256_hex(*bytes) != *ref.sha256)
        return Refusal{WireCode::kAttachmentMismatch,
                       "attachment '" + ref.attachment + "' does not have the declared sha256"};
      if (thumbnail) {
        auto t = make_thumbnail(*bytes);
        if (t.ok()) {
          a.width = t->width;
          a.height = t->height;
          a.thumbnail = true;
          thumbnails.emplace_back(thumbnail_key(*key), std::move(t->jpeg));
        } else if (t.code() == Errc::kInvalidArgument) {
          return Refusal{WireCode::kAttachmentMismatch, "attachment '" + ref.attachment + "' is declared '" +
                                                            ref.content_type + "' but is not an image"};
        } else {
          // Too many pixels, or libvips failed on a decodable image: the file is fine, it has no thumbnail.
          spdlog::warn("attachments: no thumbnail for an image: {}", t.error().message());
        }
      }
    }
    out.push_back(std::move(a));
    keys.push_back(std::move(*key));
  }
  // Only now, with every object checked: the thumbnails (before the markers: a marker says "complete")...
  for (const auto& [key, jpeg] : thumbnails) {
    if (Status s = store_.put(key, "image/jpeg", jpeg); !s.ok()) return unavailable("SEND", s.error());
  }
  // ... and the markers that keep them from the orphan sweep (docs/adr/0114).
  for (const std::string& key : keys) {
    if (Status s = store_.put(referenced_marker_key(key), "text/plain", ""); !s.ok())
      return unavailable("SEND", s.error());
  }
  return out;
}

Decided<DownloadGrant> AttachmentService::grant_download(const UserId& sender,
                                                         const ConversationId& conversation,
                                                         int64_t sent_at_ms, std::string_view body,
                                                         std::string_view id, bool thumbnail) {
  const Refusal unknown{WireCode::kUnknownAttachment, "no such attachment in a message you may see"};
  if (options_.retention_ms > 0 && clock_->now_ms() - sent_at_ms > options_.retention_ms)
    return Refusal{WireCode::kUnknownAttachment, "the message's attachments have expired (retention)"};
  auto parsed = decode_message_body(body);
  if (!parsed) return unknown;
  const StoredAttachment* found = nullptr;
  for (const StoredAttachment& a : parsed->attachments)
    if (a.ref.attachment == id) found = &a;
  if (found == nullptr || (thumbnail && !found->thumbnail)) return unknown;
  auto key = key_of_attachment(secret_, id, sender, conversation);
  if (!key) return unknown;
  auto url = store_.presign_get(thumbnail ? thumbnail_key(*key) : *key, options_.get_ttl);
  if (!url.ok()) return unavailable("ATTACHMENT_URL", url.error());
  return DownloadGrant{std::move(*url),
                       clock_->now_ms() + std::chrono::milliseconds(options_.get_ttl).count()};
}

Status AttachmentService::delete_objects_of(const UserId& sender, const ConversationId& conversation,
                                            std::string_view body) {
  auto parsed = decode_message_body(body);
  if (!parsed) return {};
  for (const StoredAttachment& a : parsed->attachments) {
    auto key = key_of_attachment(secret_, a.ref.attachment, sender, conversation);
    if (!key) continue;  // not this sender's: nothing of theirs to delete
    for (const std::string& k : {*key, thumbnail_key(*key), referenced_marker_key(*key)})
      QIM_RETURN_IF_ERROR(store_.remove(k));
  }
  return {};
}

Result<SweepReport> AttachmentService::sweep_orphans() {
  SweepReport report;
  const int64_t now = clock_->now_ms();
  const int64_t orphan_cutoff = now - options_.orphan_age_ms;
  // Retention (docs/adr/0151): a marker is (re)written by each SEND that references its object, so its age is
  // the time since the last message with that attachment was sent.
  const bool retention = options_.retention_ms > 0;
  const int64_t retention_cutoff = retention ? now - options_.retention_ms : 0;
  std::string after;
  // Keys sort as "att/<r>", "att/<r>.ref", "att/<r>.thumb.jpg": an object's marker follows it at once,
  // so one ordered walk decides each object with what comes next (pages may split a group: carried over).
  ListedObject pending;  // an object whose marker may still come (`has_pending`)
  bool has_pending = false;
  auto orphan = [&](const ListedObject& o) -> Status {
    if (o.last_modified_ms > orphan_cutoff) return {};
    QIM_RETURN_IF_ERROR(store_.remove(o.key));
    QIM_RETURN_IF_ERROR(store_.remove(thumbnail_key(o.key)));
    ++report.deleted;
    return {};
  };
  auto referenced = [&](const ListedObject& object, const ListedObject& marker) -> Status {
    if (!retention || marker.last_modified_ms > retention_cutoff) return {};
    // The marker last: a failure in between leaves an object the next pass still finds referenced and old.
    QIM_RETURN_IF_ERROR(store_.remove(object.key));
    QIM_RETURN_IF_ERROR(store_.remove(thumbnail_key(object.key)));
    QIM_RETURN_IF_ERROR(store_.remove(marker.key));
    ++report.expired;
    return {};
  };
  while (true) {
    QIM_ASSIGN_OR_RETURN(auto page, store_.list(kAttachmentKeyPrefix, after, kListPage));
    for (const ListedObject& o : page) {
      ++report.listed;
      if (has_pending && o.key == referenced_marker_key(pending.key)) {
        has_pending = false;
        QIM_RETURN_IF_ERROR(referenced(pending, o));  // referenced: kept unless past retention
        continue;
      }
      if (has_pending) {
        QIM_RETURN_IF_ERROR(orphan(pending));
        has_pending = false;
      }
      if (o.key.find('.') == std::string::npos) {
        pending = o;
        has_pending = true;
      }
    }
    if (page.size() < kListPage) break;
    after = page.back().key;
  }
  if (has_pending) QIM_RETURN_IF_ERROR(orphan(pending));
  return report;
}

}  // namespace qim::attachments
