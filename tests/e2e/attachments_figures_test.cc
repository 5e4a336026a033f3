// Issue 41 item 8's figures, printed, not asserted (docs/benchmarks.md "Attachments"): on the deployment
// under test with its object store, (1) the time from an upload done (the client's PUT answered) to the
// recipient holding the thumbnail's bytes, and (2) the CPU the QIM process spends per attachment message
// against a text message, for files of two sizes (their bytes never pass through QIM) and for an image
// (read back once for its thumbnail, decision 115). Disabled: run it by hand with
//   QIM_S3_...=... tests/e2e/qim_e2e_test --gtest_also_run_disabled_tests --gtest_filter='*A90*'
// The CPU is `qim up`'s one process (gateway and pipeline together), or on the distributed deployment the
// two gateways' (by the pids in their running.json; /proc ticks, 10 ms: read the figures as +-0.5 ms).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "e2e/attachment_support.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

// ---- a PNG encoder for the test's image: stored (uncompressed) deflate blocks, so it needs no zlib; a
//      1024 x 768 RGB image is then ~2.4 MB, a phone photo's size.
uint32_t crc32(const std::string& bytes) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void be32(std::string& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}

void chunk(std::string& png, const char* type, const std::string& data) {
  be32(png, static_cast<uint32_t>(data.size()));
  const std::string typed = std::string(type, 4) + data;
  png += typed;
  be32(png, crc32(typed));
}

std::string make_png(uint32_t width, uint32_t height) {
  std::string raw;  // filter byte 0, then RGB per row: a gradient with some structure
  raw.reserve(static_cast<size_t>(height) * (1 + 3 * width));
  for (uint32_t y = 0; y < height; ++y) {
    raw.push_back('\0');
    for (uint32_t x = 0; x < width; ++x) {
      raw.push_back(static_cast<char>(x * 255 / width));
      raw.push_back(static_cast<char>(y * 255 / height));
      raw.push_back(static_cast<char>(((x / 32 + y / 32) % 2) * 200));
    }
  }
  std::string z = "\x78\x01";  // zlib header, then stored blocks of at most 65535 bytes
  uint32_t a = 1, b = 0;       // Adler-32
  for (unsigned char c : raw) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  for (size_t at = 0; at < raw.size();) {
    const size_t n = std::min<size_t>(65535, raw.size() - at);
    z.push_back(at + n == raw.size() ? '\x01' : '\x00');
    z.push_back(static_cast<char>(n & 0xff));
    z.push_back(static_cast<char>(n >> 8));
    z.push_back(static_cast<char>(~n & 0xff));
    z.push_back(static_cast<char>((~n >> 8) & 0xff));
    z.append(raw, at, n);
    at += n;
  }
  be32(z, (b << 16) | a);
  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  be32(ihdr, width);
  be32(ihdr, height);
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8 bits, RGB, deflate, no filter choice, no interlace
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", z);
  chunk(png, "IEND", "");
  return png;
}

// The CPU seconds (user + system) of one process, by the pid in its data directory's running.json.
std::optional<double> cpu_seconds_of(const std::string& data_dir) {
  std::ifstream running(data_dir + "/running.json");
  std::string text((std::istreambuf_iterator<char>(running)), std::istreambuf_iterator<char>());
  const size_t at = text.find("\"pid\":");
  if (at == std::string::npos) return std::nullopt;
  const long pid = std::strtol(text.c_str() + at + 6, nullptr, 10);
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stod(f);
    if (i == 15) stime = std::stod(f);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The data directories whose CPU is counted: the gateways' on the distributed deployment (siblings of the
// operator's data directory, deployment.cc), else `qim up`'s one process (gateway and pipeline together).
std::vector<std::string> measured_dirs(const Deployment& qim) {
  const std::string parent = std::filesystem::path(qim.data_dir()).parent_path().string();
  if (std::filesystem::exists(parent + "/gateway-1/running.json"))
    return {parent + "/gateway-1", parent + "/gateway-2"};
  return {qim.data_dir()};
}

std::optional<double> qim_cpu_seconds(const std::vector<std::string>& dirs) {
  double sum = 0;
  for (const auto& d : dirs) {
    auto s = cpu_seconds_of(d);
    if (!s) return std::nullopt;
    sum += *s;
  }
  return sum;
}

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))]; };
  char out[128];
  std::snprintf(out, sizeof out, "median %.1f ms, p90 %.1f ms, max %.1f ms", at(0.5), at(0.9), v.back());
  return out;
}

TEST(E2E, DISABLED_A90_FiguresThumbnailTimeAndCpuPerMessage) {
  if (!store_configured()) GTEST_SKIP() << "QIM_S3_ENDPOINT is unset: no object store for attachments";
  auto& qim = shared_qim();
  const auto a = user("a90", "alice"), b = user("a90", "bob");
  auto alice = login(qim, a);
  auto bob = login(qim, b);
  const std::string conversation = conv(a, b);
  const std::string png = make_png(1024, 768);
  constexpr int kRuns = 20;  // latency runs; the CPU figures take kRuns messages of each kind
  int cmid = 0;

  // (1) upload done -> the recipient holds the thumbnail: SEND (the check: HEAD, GET of the image, decode,
  //     thumbnail PUT, marker PUT, append), DELIVER to bob, then bob's ATTACHMENT_URL (once the archiver has
  //     the message: asked every 5 ms) and his GET of the thumbnail from the store.
  std::vector<double> to_ack, to_deliver, to_thumb;
  for (int i = 0; i < kRuns; ++i) {
    const std::string id = upload(*alice, conversation, png, "image/png");
    ASSERT_FALSE(id.empty());
    const auto done = std::chrono::steady_clock::now();
    auto ack =
        send_with(*alice, conversation, "f" + std::to_string(++cmid), id, png.size(), "photo", "image/png");
    ASSERT_EQ(ack.type, "SEND_ACK") << ack.raw;
    const auto acked = std::chrono::steady_clock::now();
    ASSERT_EQ(collect_delivered(*bob, 1, kWait).size(), 1u);
    const auto delivered = std::chrono::steady_clock::now();
    auto url = url_when_archived(*bob, conversation, ack.message_id, id, /*thumbnail=*/true);
    ASSERT_EQ(url.type, "ATTACHMENT_URL_OK") << url.raw;
    auto thumb = http_request(http::verb::get, field(url.raw, "url"));
    ASSERT_EQ(thumb.status, 200u);
    const auto held = std::chrono::steady_clock::now();
    to_ack.push_back(ms_between(done, acked));
    to_deliver.push_back(ms_between(done, delivered));
    to_thumb.push_back(ms_between(done, held));
  }
  std::printf("A90 image %zu bytes (1024x768 PNG), %d runs, from the upload done:\n", png.size(), kRuns);
  std::printf("  SEND_ACK (checked, thumbnail made, appended): %s\n", percentiles(to_ack).c_str());
  std::printf("  recipient's DELIVER:                          %s\n", percentiles(to_deliver).c_str());
  std::printf("  recipient holds the thumbnail's bytes:        %s\n", percentiles(to_thumb).c_str());

  // (2) The QIM process's CPU per message, the whole exchange: text = SEND + DELIVER; an attachment =
  //     ATTACH (+ the client's PUT to the store) + SEND + DELIVER + ATTACHMENT_URL (+ the client's GET).
  const std::vector<std::string> dirs = measured_dirs(qim);
  const char* whose = dirs.size() > 1 ? "the 2 gateways' CPU" : "qim up's CPU";
  // The processes' idle CPU (timers, consumers' polls, the sweeps) accrues with the wall time, which the
  // uploads of large files stretch: measured over 3 s of no traffic, and subtracted (the "net" figure).
  double idle_per_ms = 0;
  {
    const auto before = qim_cpu_seconds(dirs);
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(3));  // a measurement window, not a synchronisation
    const auto after = qim_cpu_seconds(dirs);
    if (before && after)
      idle_per_ms = (*after - *before) * 1000.0 / ms_between(start, std::chrono::steady_clock::now());
    std::printf("A90 idle: %s %.1f ms per second\n", whose, idle_per_ms * 1000.0);
  }
  auto per_message = [&](const char* what, const std::function<void(int)>& one) {
    const auto before = qim_cpu_seconds(dirs);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRuns; ++i) one(i);
    const auto end = std::chrono::steady_clock::now();
    const auto after = qim_cpu_seconds(dirs);
    if (before && after) {
      const double wall = ms_between(start, end), total = (*after - *before) * 1000.0;
      std::printf("A90 %-32s %s %.2f ms per message, net of idle %.2f ms (%d messages, %.0f ms wall)\n", what,
                  whose, total / kRuns, (total - idle_per_ms * wall) / kRuns, kRuns, wall);
    } else {
      std::printf("A90 %-32s CPU n/a (no running.json)\n", what);
    }
  };
  per_message("text message", [&](int) {
    auto sent = alice->send(b, "t" + std::to_string(++cmid), "a text message of ordinary length");
    ASSERT_TRUE(sent.ok()) << sent.error().to_string();
    ASSERT_EQ(collect_delivered(*bob, 1, kWait).size(), 1u);
  });
  auto attachment = [&](const std::string& bytes, const std::string& type) {
    return [&, data = &bytes, type](int) {
      const std::string& file = *data;
      const std::string id = upload(*alice, conversation, file, type);
      ASSERT_FALSE(id.empty());
      auto ack = send_with(*alice, conversation, "a" + std::to_string(++cmid), id, file.size(), "file", type);
      ASSERT_EQ(ack.type, "SEND_ACK") << ack.raw;
      ASSERT_EQ(collect_delivered(*bob, 1, kWait).size(), 1u);
      auto url = url_when_archived(*bob, conversation, ack.message_id, id);
      ASSERT_EQ(url.type, "ATTACHMENT_URL_OK") << url.raw;
      ASSERT_EQ(http_request(http::verb::get, field(url.raw, "url")).body.size(), file.size());
    };
  };
  const std::string small = pattern_bytes(100'000, 13), large = pattern_bytes(8'000'000, 7);
  per_message("file 100 KB (application/zip)", attachment(small, "application/zip"));
  per_message("file 8 MB (application/zip)", attachment(large, "application/zip"));
  per_message("image 2.4 MB (PNG, thumbnail)", attachment(png, "image/png"));
}

}  // namespace
}  // namespace qim::e2e
