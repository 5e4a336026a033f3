// The MailboxStore contract suite, part 5: begin_dispatch_page, a page of records begun with the
// backend's identity reads and writes issued together. It must decide every record exactly as
// begin_dispatch one after the other would (ADR-0022 section 4: the page only saves round trips).
#include <gtest/gtest.h>

#include <vector>

#include "mailbox/contract_store.h"
#include "mailbox/memory/memory_backend.h"
#include "mailbox/tests/contract_fixture.h"
#include "mailbox/tests/forwarding_backend.h"

namespace qim::test {
namespace {

TEST_P(ContractTest, BeginPageDecidesEachRecordAsSingleBeginsInPageOrderWould) {
  const auto old = to_bob("old", 1);
  ASSERT_TRUE(is_ok(materialise(old, 50, MailboxSeq{})));
  const auto d0 = to_bob("d0", 2), d1 = to_bob("d1", 3), d3 = to_bob("d3", 4);
  const auto d1_other = to_bob("d1", 5);  // another message under d1's id
  DispatchIdentity no_chunks = to_bob("d2", 6).identity;
  no_chunks.manifest.entry_counts.clear();
  const std::vector<BeginRequest> page = {{&d0.identity, Offset{100}},       {&d1.identity, Offset{101}},
                                          {&d0.identity, Offset{102}},       {&no_chunks, Offset{103}},
                                          {&d1_other.identity, Offset{104}}, {&old.identity, Offset{105}},
                                          {&d3.identity, Offset{106}}};
  auto begun = store().begin_dispatch_page(kShard, kEpoch, page);
  ASSERT_TRUE(is_ok(begun));
  ASSERT_EQ(begun->size(), page.size());
  const auto& b = *begun;
  for (size_t i : {0u, 1u, 6u}) {
    ASSERT_TRUE(is_ok(b[i])) << "record " << i;
    EXPECT_EQ(b[i]->kind, BeginKind::kFresh) << "record " << i;
    EXPECT_TRUE(b[i]->canonical) << "record " << i;
    EXPECT_TRUE(b[i]->needs_entries) << "record " << i;
    EXPECT_EQ(b[i]->seq, seq_of(1, page[i].observed.value));
  }
  ASSERT_TRUE(is_ok(b[2]));
  EXPECT_EQ(b[2]->kind, BeginKind::kExisting) << "d0 was observed earlier in the page";
  EXPECT_EQ(b[2]->canonical_offset, Offset{100});
  EXPECT_FALSE(b[2]->canonical);
  EXPECT_FALSE(b[2]->needs_entries) << "its canonical observation earlier in the page writes them";
  ASSERT_TRUE(is_ok(b[3])) << "an empty manifest (a record that writes no entry, decision 160) is begun";
  EXPECT_EQ(b[3]->kind, BeginKind::kFresh);
  EXPECT_TRUE(fails_with(b[4], Errc::kDispatchConflict)) << "d1 was first observed with another digest";
  ASSERT_TRUE(is_ok(b[5]));
  EXPECT_EQ(b[5]->canonical_offset, Offset{50});
  EXPECT_FALSE(b[5]->needs_entries) << "the frontier covers it";

  // The node writes what is needed and finishes (the refused records are quarantined and passed).
  for (const auto* r : {&d0, &d1, &d3}) ASSERT_TRUE(is_ok(write(*r)));
  ASSERT_TRUE(is_ok(finish(d0, seq_of(1, 50), 100)));
  ASSERT_TRUE(is_ok(finish(d1, seq_of(1, 100), 101)));
  ASSERT_TRUE(is_ok(finish(d3, seq_of(1, 101), 106)));

  // A new store over the same data (empty in-flight table): the identities the page stored decide.
  restart();
  EXPECT_EQ(seqs(bob_), (std::vector{seq_of(1, 50), seq_of(1, 100), seq_of(1, 101), seq_of(1, 106)}));
  auto again = begin(d0, 200);
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->canonical_offset, Offset{100});
  EXPECT_FALSE(again->needs_entries);
  EXPECT_TRUE(fails_with(begin(d1_other, 201), Errc::kDispatchConflict));
}

TEST_P(ContractTest, BeginPageOfAStaleOwnerBeginsNothing) {
  ASSERT_TRUE(is_ok(materialise(to_bob("new", 1), 10, MailboxSeq{}, Epoch{2})));
  const auto d = to_bob("d", 2);
  const OpCounts before = ops();
  const BeginRequest one{&d.identity, Offset{11}};
  EXPECT_TRUE(fails_with(store().begin_dispatch_page(kShard, kEpoch, std::span(&one, 1)), Errc::kEpochAhead));
  EXPECT_EQ((ops() - before).inserts, 0u);
  EXPECT_EQ((ops() - before).lwts, 0u);
}

// A backend that counts how ContractStore claims identities.
class ClaimCounting final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  int single_claims = 0, page_claims = 0;
  size_t claimed = 0;
  Result<std::optional<StoredIdentity>> claim_identity(ShardId s, Epoch e, const DispatchIdentity& i,
                                                       Offset o) override {
    single_claims++;
    return ForwardingBackend::claim_identity(s, e, i, o);
  }
  std::vector<ClaimAnswer> claim_identities(ShardId s, Epoch e,
                                            std::span<const IdentityClaim> claims) override {
    page_claims++;
    claimed += claims.size();
    return ForwardingBackend::claim_identities(s, e, claims);
  }
};

TEST(ContractStorePages, APageClaimsItsDistinctIdsInOneBackendCall) {
  BackendContext context;
  context.clock = std::make_shared<ManualClock>(kStartMs);
  auto rows = make_memory_backend(context);
  auto counting = std::make_unique<ClaimCounting>(*rows);
  ClaimCounting& calls = *counting;
  ContractStore store(std::move(counting), context, std::nullopt);
  const UserId alice = user_in_shard(context.shards, kShard, 0);
  std::vector<DispatchRecord> records;
  for (int i = 0; i < 4; ++i) {
    records.push_back(make_record("d" + std::to_string(i), make_message(i + 1, alice, kStartMs), {{alice}}));
  }
  std::vector<BeginRequest> page;
  for (uint64_t i = 0; i < 4; ++i) page.push_back({&records[i].identity, Offset{i}});
  page.push_back({&records[1].identity, Offset{4}});  // a repeated observation inside the page
  auto begun = store.begin_dispatch_page(kShard, kEpoch, page);
  ASSERT_TRUE(is_ok(begun));
  EXPECT_EQ(calls.page_claims, 1);
  EXPECT_EQ(calls.claimed, 4u) << "one claim per distinct id";
  EXPECT_EQ(calls.single_claims, 0);
  ASSERT_TRUE(is_ok((*begun)[4]));
  EXPECT_EQ((*begun)[4]->canonical_offset, Offset{1});
}

}  // namespace
}  // namespace qim::test
