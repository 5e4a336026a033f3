// The embedded (RocksDB) group store under the contract suite: a directory per harness.
#include "groups/embedded/rocks_group_store.h"
#include "groups/tests/group_store_fixture.h"
#include "log/testing/temp_dir.h"

namespace qim::test {

namespace {

class RocksHarness final : public GroupHarness {
 public:
  Result<std::unique_ptr<GroupStore>> open() override {
    QIM_ASSIGN_OR_RETURN(auto store, RocksGroupStore::open(dir_.sub("groups")));
    return std::unique_ptr<GroupStore>(std::move(store));
  }
  // The key layout of rocks_group_store.h.
  Status plant_corrupt_member(GroupStore& current, const GroupId& group, const UserId& user) override {
    auto* rocks = dynamic_cast<RocksGroupStore*>(&current);
    if (rocks == nullptr) return Error(Errc::kInvalidArgument, "not a RocksGroupStore");
    const std::string key = "m" + group.str() + std::string(1, '\0') + user.str();
    if (!rocks->raw_db().Put(rocksdb::WriteOptions(), key, "not a member row").ok()) {
      return Error(Errc::kIo, "plant corrupt member row");
    }
    return {};
  }

 private:
  testing::TempDir dir_;
};

}  // namespace

GroupFixture group_fixture() {
  GroupFixture f;
  f.name = "embedded";
  f.make_harness = []() -> Result<std::unique_ptr<GroupHarness>> {
    return std::unique_ptr<GroupHarness>(std::make_unique<RocksHarness>());
  };
  return f;
}

}  // namespace qim::test
