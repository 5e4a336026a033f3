#pragma once
// Which devices of a user have a push target (docs/push.md, docs/adr/0116): per-user cells beside the
// inbox's settings and privacy cells (InboxBackend::put_setting: last writer wins by a version below 2^48,
// a blind write, no read-modify-write, no counter), in the scoped owner "~push~<user>" ('~' is not in the
// name alphabet), one cell per device:
//
//   ~push~<user>   <device>   "<provider> <registered ms> <token>" registered | "" unregistered
//
// So the registry lives wherever the inbox does: `qim up` in RocksDB beside the other stores in the data
// directory, the distributed deployment in Redis (or CQL). A registration's version is the server's time;
// an unregistration because the provider rejected the token is written at the registration's time + 1, so
// it loses to any later registration of the device (a device that registered again in between keeps its
// new token) without a read-modify-write.
//
// Thread-safe (the backend is). Errors are values: the backend's, or those named below.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "inbox/inbox_backend.h"
#include "push/push_target.h"

namespace qim {

// Devices with a push target a user may have (PUSH_REGISTER past it: ResourceExhausted).
inline constexpr size_t kMaxPushDevices = 10;

class PushRegistry {
 public:
  explicit PushRegistry(InboxBackend& backend) : backend_(backend) {}

  // Registers (or replaces) the target of `device`, at `version` (the server's time in ms; it becomes
  // target.registered_ms). InvalidArgument for a token of the wrong form (check_push_token);
  // ResourceExhausted when the user already has kMaxPushDevices other devices registered.
  Status register_device(const UserId& user, const DeviceId& device, PushProvider provider,
                         const std::string& token, int64_t version);
  // Clears the device's target (nothing registered: still OK, and written).
  Status unregister_device(const UserId& user, const DeviceId& device, int64_t version);
  // Clears `target` of `device` because the provider rejected it: written at target.registered_ms + 1,
  // so a later registration of the device wins (see above).
  Status drop_rejected(const UserId& user, const DeviceId& device, const PushTarget& target);
  // The user's registered devices (unregistered ones and unreadable cells left out). One read.
  Result<std::map<DeviceId, PushTarget>> devices(const UserId& user);

 private:
  InboxBackend& backend_;
};

// What the gateways tell clients of the deployment's push (PUSH_CONFIG): the providers the running push
// role sends through and the VAPID public key (base64url; empty: no Web Push). The push role publishes it
// at its start in the cells of the scoped owner "~pushconfig~" (keys "providers", "vapid_public_key"), so a
// gateway of a distributed deployment needs no push configuration of its own; last writer wins.
struct PushDoor {
  std::vector<PushProvider> providers;
  std::string vapid_public_key;
  bool operator==(const PushDoor&) const = default;
};
Status publish_push_door(InboxBackend& backend, const PushDoor& door, int64_t version);
// What was published; empty (push off) if nothing was. The backend's error as it is.
Result<PushDoor> read_push_door(InboxBackend& backend);

// The cell's value of a target, and back (nullopt: unregistered or not a target's value).
std::string encode_push_cell(const PushTarget& t);
std::optional<PushTarget> decode_push_cell(std::string_view value);

}  // namespace qim
