#include <map>
#include <mutex>

#include "lifecycle/message_state_store.h"

namespace qim {

namespace {

class MemoryMessageStateStore final : public MessageStateStore {
 public:
  Result<std::optional<MessageState>> load(MessageId id) override {
    std::lock_guard lock(mu_);
    auto it = states_.find(id.value);
    if (it == states_.end()) return std::optional<MessageState>();
    return std::optional<MessageState>(it->second);
  }
  Result<std::vector<std::optional<MessageState>>> load_many(std::span<const MessageId> ids) override {
    std::vector<std::optional<MessageState>> out;
    for (MessageId id : ids) {
      QIM_ASSIGN_OR_RETURN(auto s, load(id));
      out.push_back(std::move(s));
    }
    return out;
  }
  Status put(const MessageState& state, uint32_t partition, uint64_t event_offset) override {
    std::lock_guard lock(mu_);
    states_[state.id.value] = state;
    uint64_t& w = watermarks_[partition];
    w = std::max(w, event_offset + 1);
    return {};
  }
  Status raise_watermark(uint32_t partition, uint64_t event_offset) override {
    std::lock_guard lock(mu_);
    uint64_t& w = watermarks_[partition];
    w = std::max(w, event_offset + 1);
    return {};
  }
  Result<uint64_t> watermark(uint32_t partition) override {
    std::lock_guard lock(mu_);
    auto it = watermarks_.find(partition);
    return it == watermarks_.end() ? 0 : it->second;
  }

 private:
  std::mutex mu_;
  std::map<uint64_t, MessageState> states_;
  std::map<uint32_t, uint64_t> watermarks_;
};

}  // namespace

std::unique_ptr<MessageStateStore> make_memory_message_state_store() {
  return std::make_unique<MemoryMessageStateStore>();
}

}  // namespace qim
