// qim-frame-bench: the CPU the gateway spends writing server frames (Google Benchmark). Every DELIVER the
// fan-in hands on is encoded once per push, and its body, the largest field, goes through the JSON string
// escaper byte by byte; at 8,000 msg/s that escaper and the string growth around it were about 3% of
// `qim up`'s samples (docs/benchmarks.md, "Frame encoding").
//
//   build/release/src/bench/frames/qim-frame-bench [--benchmark_filter=Deliver]
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "gateway/protocol/json_writer.h"
#include "gateway/protocol/server_frame.h"

namespace qim {
namespace {

// A body as qim-load sends it ('x' repeated), or a chat line with every kind of byte the escaper treats
// apart: quotes, a newline, two- to four-byte UTF-8.
std::string body_of(bool plain, size_t bytes) {
  if (plain) return std::string(bytes, 'x');
  const std::string line =
      "He said \"see you at 10\"\n\xC3\xA9t\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x8E\x89 ";
  std::string out;
  while (out.size() + line.size() <= bytes) out += line;
  out.append(bytes - out.size(), 'x');
  return out;
}

MailboxEntry entry_of(uint64_t seq, std::string body) {
  MailboxEntry e;
  e.user = UserId::unchecked("load_1234_567890_r17");
  e.seq = MailboxSeq::from_raw(seq);
  e.message.id = MessageId{(uint64_t{3} << 48) | seq};
  e.message.conversation = *ConversationId::parse("d:load_1234_567890_r17:load_1234_567890_s17");
  e.message.sender = UserId::unchecked("load_1234_567890_s17");
  e.message.sender_device = DeviceId::unchecked("load");
  e.message.client_msg_id = "m" + std::to_string(seq);
  e.message.server_time_ms = 1'796'000'000'000;
  e.message.body = std::move(body);
  return e;
}

void BM_AppendJsonString(benchmark::State& state) {
  const std::string body = body_of(state.range(0) != 0, static_cast<size_t>(state.range(1)));
  for (auto _ : state) {
    std::string out;
    append_json_string(out, body);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_AppendJsonString)->ArgNames({"plain", "bytes"})->ArgsProduct({{1, 0}, {100, 1024}});

// A DELIVER of `entries` consecutive entries with 100-byte bodies: one is the common push at low rates,
// 8 a page's worth at 8,000 msg/s.
void BM_EncodeDeliver(benchmark::State& state) {
  std::vector<MailboxEntry> entries;
  for (int64_t i = 0; i < state.range(1); ++i)
    entries.push_back(entry_of(1000 + static_cast<uint64_t>(i), body_of(state.range(0) != 0, 100)));
  const auto from = entries.front().seq;
  const auto frontier = MailboxSeq::from_raw(entries.back().seq.raw() + 1);
  for (auto _ : state) benchmark::DoNotOptimize(encode_deliver(entries, from, frontier));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * entries.size()));
}
BENCHMARK(BM_EncodeDeliver)->ArgNames({"plain", "entries"})->ArgsProduct({{1, 0}, {1, 8}});

void BM_EncodeSendAck(benchmark::State& state) {
  SendAck ack;
  ack.client_msg_id = "m12345";
  ack.message_id = MessageId{(uint64_t{3} << 48) | 12345};
  ack.conversation = *ConversationId::parse("d:load_1234_567890_r17:load_1234_567890_s17");
  ack.server_time_ms = 1'796'000'000'000;
  for (auto _ : state) benchmark::DoNotOptimize(encode_send_ack("r12345", ack));
}
BENCHMARK(BM_EncodeSendAck);

}  // namespace
}  // namespace qim

BENCHMARK_MAIN();
