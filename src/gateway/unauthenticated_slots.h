#pragma once
// The bound on connections that have not authenticated yet (docs/protocol.md "Limits and closes"). A
// connection holds one of these slots from the TCP accept (before TLS and the upgrade request) until its
// AUTH succeeds or it closes: without it a reconnect loop that never authenticates held up to
// max_connections slots for the 10 s of the upgrade and AUTH deadlines, and every other client was
// answered 503. The bound is global and per peer address, so one address cannot take the global share.
//
// Thread-safe: connections on different strands take and release slots.

#include <boost/asio/ip/address.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace qim {

class UnauthenticatedSlots {
 public:
  // At most `max_total` slots held at once, at most `max_per_peer` by one peer address.
  UnauthenticatedSlots(uint32_t max_total, uint32_t max_per_peer);
  UnauthenticatedSlots(const UnauthenticatedSlots&) = delete;
  UnauthenticatedSlots& operator=(const UnauthenticatedSlots&) = delete;

  // A held slot; released by release() or its destruction, once.
  class Slot {
   public:
    Slot(Slot&& o) noexcept : owner_(o.owner_), peer_(o.peer_) { o.owner_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    ~Slot() { release(); }
    void release();

   private:
    friend class UnauthenticatedSlots;
    Slot(UnauthenticatedSlots* owner, boost::asio::ip::address peer) : owner_(owner), peer_(peer) {}
    UnauthenticatedSlots* owner_;
    boost::asio::ip::address peer_;
  };

  // A slot for a connection from `peer`, or nullopt when either bound is reached (the caller closes it).
  std::optional<Slot> try_take(const boost::asio::ip::address& peer);

  uint32_t held() const;

 private:
  void give_back(const boost::asio::ip::address& peer);

  const uint32_t max_total_;
  const uint32_t max_per_peer_;
  mutable std::mutex mu_;
  uint32_t total_ = 0;
  std::map<boost::asio::ip::address, uint32_t> per_peer_;
};

}  // namespace qim
