// The audit's checks over a reader that hands out fixed rows (no engine: label unit). The backends'
// readers are tested against real engines in tests/ops/.
#include "ops/dispatch_audit.h"

#include <gtest/gtest.h>

#include "fanout/dispatch_plan.h"
#include "mailbox/store_options.h"

namespace qim {
namespace {

class FixedReader : public AuditReader {
 public:
  std::vector<AuditFrontierRow> frontier_rows;
  std::vector<AuditIdentityRow> identity_rows;
  std::vector<AuditEntryRow> entry_rows;
  std::vector<AuditCorruptRow> corrupt_rows;

  std::string_view backend() const override { return "fixed"; }
  std::vector<std::string> notes() const override { return {"a note"}; }
  bool identity_conflicts_possible() const override { return true; }
  template <typename Row>
  Status each(const std::vector<Row>& rows, RowPacer& pacer, const std::function<Status(const Row&)>& visit) {
    for (const auto& r : rows) QIM_RETURN_IF_ERROR(visit(r));
    pacer.account(rows.size(), "fixed");
    return {};
  }
  Status frontiers(const std::vector<ShardId>&, RowPacer& p,
                   const std::function<Status(const AuditFrontierRow&)>& v, const CorruptSink& c) override {
    for (const auto& r : corrupt_rows) c(r);
    return each(frontier_rows, p, v);
  }
  Status identities(const std::vector<ShardId>&, RowPacer& p,
                    const std::function<Status(const AuditIdentityRow&)>& v, const CorruptSink&) override {
    return each(identity_rows, p, v);
  }
  Status entries(const std::vector<ShardId>&, RowPacer& p,
                 const std::function<Status(const AuditEntryRow&)>& v, const CorruptSink&) override {
    return each(entry_rows, p, v);
  }
  Result<std::optional<AuditIdentityRow>> identity(ShardId, Epoch, const DispatchId&) override {
    return std::optional<AuditIdentityRow>();
  }
};

constexpr uint32_t kShards = 4;

UserId user_on(uint32_t shard) {
  const ShardMap map = *ShardMap::create(kShards);
  for (int i = 0;; ++i) {
    UserId u = UserId::unchecked("u" + std::to_string(i));
    if (map.shard_of(u).value == shard) return u;
  }
}

AuditIdentityRow identity(uint32_t shard, uint32_t epoch, uint64_t message, uint64_t digest,
                          uint64_t canonical) {
  return AuditIdentityRow{ShardId{shard},
                          Epoch{epoch},
                          dispatch_id_for(MessageId{message}, ShardId{shard}),
                          digest,
                          Manifest{{1}},
                          Offset{canonical},
                          static_cast<int64_t>(kMaxOffset - canonical),
                          kDispatchIdentityTtlSeconds - 10};
}

AuditEntryRow entry(const UserId& user, uint32_t epoch, uint64_t offset, uint64_t message) {
  return AuditEntryRow{user, *compose(Epoch{epoch}, Offset{offset}), MessageId{message}};
}

// A clean store: two epochs of one shard, the same dispatch at both with the same payload.
FixedReader clean_store() {
  FixedReader r;
  const UserId u = user_on(1);
  r.frontier_rows = {{ShardId{1}, Epoch{1}, Offset{20}, 20}, {ShardId{1}, Epoch{2}, Offset{30}, 30}};
  r.identity_rows = {identity(1, 1, 7, 0xaa, 10), identity(1, 2, 7, 0xaa, 10), identity(1, 2, 8, 0xbb, 25)};
  r.entry_rows = {entry(u, 1, 10, 7), entry(u, 2, 10, 7), entry(u, 2, 25, 8)};
  return r;
}

AuditRequest request(std::vector<ShardId> shards = {}) {
  return AuditRequest{*ShardMap::create(kShards), std::move(shards), 1'000'000, {}};
}

TEST(DispatchAudit, CleanStoreHasNoFindingsAndCountsWhatItWalked) {
  FixedReader r = clean_store();
  auto report = audit_dispatch(r, request());
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  EXPECT_TRUE(report->findings.empty()) << render_audit_table(*report);
  EXPECT_EQ(report->counts.frontier_rows, 2u);
  EXPECT_EQ(report->counts.identity_rows, 3u);
  EXPECT_EQ(report->counts.entry_rows, 3u);
  EXPECT_EQ(report->counts.entries_without_identity, 0u);
  EXPECT_EQ(report->counts.entries_above_frontier, 0u);
  EXPECT_NE(render_audit_json(*report).find("\"clean\":true"), std::string::npos);
}

TEST(DispatchAudit, FindsEachKindOnce) {
  FixedReader r = clean_store();
  const UserId u = user_on(1);
  r.identity_rows[1].digest = 0xcc;  // conflict across epochs 1 and 2
  r.identity_rows[2].writetime = 5;  // identity WRITETIME wrong
  r.identity_rows.push_back(identity(1, 2, 9, 0xdd, 26));
  r.identity_rows.back().ttl_seconds = -1;      // no TTL
  r.frontier_rows[0].writetime = 19;            // frontier WRITETIME wrong
  r.entry_rows.push_back(entry(u, 2, 27, 9));   // entry not at its canonical offset (26)
  r.entry_rows.push_back(entry(u, 2, 40, 99));  // no identity, above the frontier: counted only
  r.corrupt_rows.push_back({"somewhere", "bad bytes"});
  auto report = audit_dispatch(r, request());
  ASSERT_TRUE(report.ok());
  std::vector<std::string> kinds;
  for (const auto& f : report->findings) kinds.emplace_back(audit_finding_name(f.kind));
  EXPECT_EQ(kinds, (std::vector<std::string>{"identity_conflict", "entry_seq_mismatch", "identity_writetime",
                                             "identity_ttl", "frontier_writetime", "corrupt_row"}))
      << render_audit_table(*report);
  EXPECT_EQ(report->findings[0].dispatch_id, "m7-s1");
  EXPECT_EQ(report->findings[0].epoch->value, 2u);
  EXPECT_EQ(report->findings[1].user, u.str());
  EXPECT_EQ(report->counts.entries_without_identity, 1u);
  EXPECT_EQ(report->counts.entries_above_frontier, 1u);
  const std::string json = render_audit_json(*report);
  EXPECT_NE(json.find("\"clean\":false"), std::string::npos);
  EXPECT_NE(json.find("\"kind\":\"identity_conflict\""), std::string::npos);
}

TEST(DispatchAudit, ShardFilterIgnoresOtherShards) {
  FixedReader r = clean_store();
  r.identity_rows[1].digest = 0xcc;  // a conflict on shard 1
  auto report = audit_dispatch(r, request({ShardId{2}}));
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->findings.empty());
  EXPECT_EQ(report->counts.identity_rows, 0u);
  EXPECT_EQ(report->counts.entry_rows, 0u);
}

TEST(DispatchAudit, UnknownShardIsRefused) {
  FixedReader r = clean_store();
  auto report = audit_dispatch(r, request({ShardId{kShards}}));
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.code(), Errc::kInvalidArgument);
}

// The pacer reports progress with the running total; the page size follows the rate.
TEST(RowPacer, ReportsProgressAndSizesPages) {
  std::vector<std::pair<uint64_t, std::string>> seen;
  RowPacer pacer(
      1'000'000, [&](uint64_t rows, std::string_view phase) { seen.emplace_back(rows, phase); },
      std::chrono::milliseconds(0));
  pacer.account(10, "identities");
  pacer.account(5, "entries");
  EXPECT_EQ(seen, (std::vector<std::pair<uint64_t, std::string>>{{10, "identities"}, {15, "entries"}}));
  EXPECT_EQ(pacer.total(), 15u);
  EXPECT_EQ(RowPacer(50, {}).page_size(), 50u);
  EXPECT_EQ(RowPacer(5000, {}).page_size(), 500u);
}

}  // namespace
}  // namespace qim
