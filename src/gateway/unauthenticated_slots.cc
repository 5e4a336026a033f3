#include "gateway/unauthenticated_slots.h"

namespace qim {

UnauthenticatedSlots::UnauthenticatedSlots(uint32_t max_total, uint32_t max_per_peer)
    : max_total_(max_total), max_per_peer_(max_per_peer) {}

void UnauthenticatedSlots::Slot::release() {
  if (owner_ == nullptr) return;
  owner_->give_back(peer_);
  owner_ = nullptr;
}

std::optional<UnauthenticatedSlots::Slot> UnauthenticatedSlots::try_take(
    const boost::asio::ip::address& peer) {
  // An IPv4 peer reached over an IPv6 socket counts as its IPv4 address.
  boost::asio::ip::address key = peer;
  if (peer.is_v6() && peer.to_v6().is_v4_mapped())
    key = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, peer.to_v6());
  std::lock_guard lock(mu_);
  if (total_ >= max_total_) return std::nullopt;
  uint32_t& mine = per_peer_[key];
  if (mine >= max_per_peer_) return std::nullopt;
  ++mine;
  ++total_;
  return Slot(this, key);
}

uint32_t UnauthenticatedSlots::held() const {
  std::lock_guard lock(mu_);
  return total_;
}

void UnauthenticatedSlots::give_back(const boost::asio::ip::address& peer) {
  std::lock_guard lock(mu_);
  --total_;
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
}

}  // namespace qim
