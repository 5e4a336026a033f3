// The memory inbox under the inbox suites, beside the memory mailbox. Its rows live in one backend object
// the harness keeps; each open() is a view of it, so a restart is a new view over the same rows.
#include "inbox/memory/memory_inbox.h"
#include "inbox/tests/forwarding_inbox.h"
#include "inbox/tests/inbox_fixture.h"

namespace qim::test {

namespace {

class MemoryInboxHarness final : public InboxHarness {
 public:
  Result<std::unique_ptr<InboxBackend>> open(const BackendContext& context) override {
    if (!rows_) rows_ = make_memory_inbox(context);
    return std::unique_ptr<InboxBackend>(std::make_unique<ForwardingInbox>(*rows_));
  }

 private:
  std::unique_ptr<InboxBackend> rows_;
};

}  // namespace

InboxFixture memory_inbox_fixture() {
  InboxFixture f;
  f.name = "memory";
  f.mailbox = memory_fixture();
  f.property_runs = 100;
  f.make_harness = []() -> Result<std::unique_ptr<InboxHarness>> {
    return std::unique_ptr<InboxHarness>(std::make_unique<MemoryInboxHarness>());
  };
  return f;
}

}  // namespace qim::test
