#pragma once
// Frame parsers shared by a gateway's connections. A simdjson parser keeps buffers sized to the largest
// frame it parsed, so one per connection would cost ~5x max_frame_bytes per idle connection; a pool holds
// about as many as frames are parsed at once (one per io thread). Thread-safe.

#include <memory>
#include <mutex>
#include <vector>

#include "gateway/protocol/client_frame.h"

namespace qim {

class ParserPool {
 public:
  // A parser on loan; back to the pool when the lease ends.
  class Lease {
   public:
    Lease(ParserPool& pool, std::unique_ptr<FrameParser> parser) : pool_(pool), parser_(std::move(parser)) {}
    ~Lease() { pool_.give_back(std::move(parser_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    FrameParser* operator->() { return parser_.get(); }

   private:
    ParserPool& pool_;
    std::unique_ptr<FrameParser> parser_;
  };

  Lease take() {
    std::lock_guard lock(mu_);
    if (free_.empty()) return Lease(*this, std::make_unique<FrameParser>());
    auto p = std::move(free_.back());
    free_.pop_back();
    return Lease(*this, std::move(p));
  }

 private:
  void give_back(std::unique_ptr<FrameParser> p) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(p));
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<FrameParser>> free_;
};

}  // namespace qim
