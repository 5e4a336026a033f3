// The embedded backend under the contract suite: each harness is a fresh directory, removed with it.
// A restart closes the RocksDB database and opens it again from disk.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <rocksdb/db.h>

#include "mailbox/embedded/embedded_backend.h"
#include "mailbox/embedded/rows.h"
#include "mailbox/tests/backend_fixture.h"

namespace qim::test {

namespace {

class EmbeddedHarness final : public BackendHarness {
 public:
  explicit EmbeddedHarness(std::string dir) : dir_(std::move(dir)) {}
  ~EmbeddedHarness() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);  // best effort: a leftover temp directory harms nothing
  }

  Result<std::unique_ptr<StoreBackend>> open(const BackendContext& context) override {
    return open_embedded_backend(context, dir_ + "/mailbox");
  }
  Status drop_proof(StoreBackend& backend, const UserId& user, DayBucket bucket) override {
    return embedded_backend_drop_proof(backend, user, bucket);
  }
  // A second, read-only open of the directory (it takes no lock; it replays the WAL the store wrote) and
  // an iteration of the entries family: what `ldb scan` would show an operator.
  Result<bool> engine_holds(StoreBackend&, std::string_view bytes) override {
    const std::string path = dir_ + "/mailbox";
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {{rocksdb::kDefaultColumnFamilyName, {}},
                                                             {std::string(embedded::kEntriesFamily), {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::OpenForReadOnly({}, path, families, &handles, &raw);
    if (!s.ok()) return Error(Errc::kIo, "read-only open of " + path + ": " + s.ToString());
    std::unique_ptr<rocksdb::DB> db(raw);
    bool found = false;
    {
      std::unique_ptr<rocksdb::Iterator> it(db->NewIterator({}, handles[1]));
      for (it->SeekToFirst(); it->Valid() && !found; it->Next()) {
        found = it->value().ToStringView().find(bytes) != std::string_view::npos;
      }
      s = it->status();
    }
    for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
    if (!s.ok()) return Error(Errc::kIo, "iterate entries of " + path + ": " + s.ToString());
    return found;
  }

 private:
  std::string dir_;
};

}  // namespace

BackendFixture embedded_fixture() {
  BackendFixture f;
  f.name = "embedded";
  f.property_runs = 10;  // each run restarts RocksDB about 20 times
  f.limits.single_opener = "RocksDB's directory lock admits one process: no stale owner can write";
  f.limits.no_writer_clock = "RocksDB orders writes by its own sequence number, not by a writer's clock";
  f.make_harness = []() -> Result<std::unique_ptr<BackendHarness>> {
    std::string pattern = ::testing::TempDir() + "qim-embedded-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return Error(Errc::kIo, "cannot create a temporary directory from " + pattern);
    }
    return std::unique_ptr<BackendHarness>(std::make_unique<EmbeddedHarness>(pattern));
  };
  return f;
}

}  // namespace qim::test
