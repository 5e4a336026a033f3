// The memory backend under the contract suite. Its data lives in the backend object, so the harness
// keeps that object and hands each open() a view of it: a restart is then a new ContractStore (empty
// in-flight table and frontier cache) over the same stored rows, as it is for a backend on disk.
#include "mailbox/memory/memory_backend.h"
#include "mailbox/tests/backend_fixture.h"
#include "mailbox/tests/forwarding_backend.h"

namespace qim::test {

namespace {

class MemoryHarness final : public BackendHarness {
 public:
  Result<std::unique_ptr<StoreBackend>> open(const BackendContext& context) override {
    if (!rows_) rows_ = make_memory_backend(context);
    return std::unique_ptr<StoreBackend>(std::make_unique<ForwardingBackend>(*rows_));
  }
  Status drop_proof(StoreBackend&, const UserId& user, DayBucket bucket) override {
    return memory_backend_drop_proof(*rows_, user, bucket);
  }
  Result<bool> engine_holds(StoreBackend&, std::string_view bytes) override {
    return memory_backend_holds(*rows_, bytes);
  }

 private:
  std::unique_ptr<StoreBackend> rows_;
};

}  // namespace

BackendFixture memory_fixture() {
  BackendFixture f;
  f.name = "memory";
  f.property_runs = 200;
  f.limits.no_clock_identity_ttl = "the memory backend keeps identities for the life of the process";
  f.limits.no_writer_clock =
      "the memory backend applies writes in the order it gets them; none carries a time";
  f.make_harness = []() -> Result<std::unique_ptr<BackendHarness>> {
    return std::unique_ptr<BackendHarness>(std::make_unique<MemoryHarness>());
  };
  return f;
}

}  // namespace qim::test
