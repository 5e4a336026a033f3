// The embedded inbox under the inbox suites, beside the embedded mailbox: each harness is a fresh
// directory, removed with it; a restart closes the RocksDB database and opens it again from disk.
#include <stdlib.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "inbox/embedded/rocks_inbox.h"
#include "inbox/tests/inbox_fixture.h"

namespace qim::test {

namespace {

class EmbeddedInboxHarness final : public InboxHarness {
 public:
  explicit EmbeddedInboxHarness(std::string dir) : dir_(std::move(dir)) {}
  ~EmbeddedInboxHarness() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);  // best effort
  }
  Result<std::unique_ptr<InboxBackend>> open(const BackendContext& context) override {
    return open_rocks_inbox(context, dir_ + "/inbox");
  }
  Status bind(InboxBackend& inbox, StoreBackend& mailbox) override {
    return attach_rocks_inbox(inbox, mailbox);
  }

 private:
  std::string dir_;
};

}  // namespace

InboxFixture embedded_inbox_fixture() {
  InboxFixture f;
  f.name = "embedded";
  f.mailbox = embedded_fixture();
  f.property_runs = 8;  // each history reopens both databases many times
  f.make_harness = []() -> Result<std::unique_ptr<InboxHarness>> {
    std::string pattern = ::testing::TempDir() + "qim-inbox-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return Error(Errc::kIo, "cannot create a temporary directory from " + pattern);
    }
    return std::unique_ptr<InboxHarness>(std::make_unique<EmbeddedInboxHarness>(pattern));
  };
  return f;
}

}  // namespace qim::test
