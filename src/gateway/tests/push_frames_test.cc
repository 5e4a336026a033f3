// The push frames (docs/protocol.md "Push"): what the parser takes, the codes of what it refuses, what the
// encoders write, and the answers over a memory inbox backend (the registry's cells, the bound's code, the
// published configuration).
#include "gateway/protocol/push_frames.h"

#include <gtest/gtest.h>

#include "gateway/gateway_metrics.h"
#include "gateway/protocol/wire_code.h"
#include "gateway/push_requests.h"
#include "inbox/memory/memory_inbox.h"

namespace qim {
namespace {

const std::string kSubscription =
    R"({\"endpoint\":\"https://push.example/x\",\"keys\":{\"p256dh\":\"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4\",\"auth\":\"BTBZMqHH6r4Tts7J_aSIgg\"}})";

PushFrame frame(const std::string& text) {
  auto r = parse_push_request(text);
  EXPECT_TRUE(r.has_value()) << text;
  if (!r || !std::holds_alternative<PushFrame>(*r)) {
    ADD_FAILURE() << text << ": refused";
    return PushFrame{};
  }
  return std::get<PushFrame>(*r);
}

std::string code(const std::string& text) {
  auto r = parse_push_request(text);
  if (!r || !std::holds_alternative<PushFrameError>(*r)) {
    ADD_FAILURE() << text << ": not refused";
    return {};
  }
  return std::string(wire_code_name(std::get<PushFrameError>(*r).code));
}

TEST(PushFramesTest, ParsesEachFrameAndLeavesOthersAlone) {
  auto reg = std::get<PushRegisterFrame>(
      frame(R"({"type":"PUSH_REGISTER","ref":"p","provider":"webpush","token":")" + kSubscription + "\"}"));
  EXPECT_EQ(reg.provider, PushProvider::kWebPush);
  EXPECT_TRUE(reg.token.starts_with(R"({"endpoint":"https://push.example/x")"));
  auto apns = std::get<PushRegisterFrame>(
      frame(R"({"type":"PUSH_REGISTER","provider":"apns","token":")" + std::string(64, 'f') + "\"}"));
  EXPECT_EQ(apns.provider, PushProvider::kApns);
  EXPECT_TRUE(std::holds_alternative<PushUnregisterFrame>(frame(R"({"type":"PUSH_UNREGISTER"})")));
  EXPECT_TRUE(std::holds_alternative<PushConfigFrame>(frame(R"({"type":"PUSH_CONFIG"})")));
  EXPECT_FALSE(parse_push_request(R"({"type":"SEND"})"));
  EXPECT_FALSE(parse_push_request("not json"));
}

TEST(PushFramesTest, EachRefusalHasItsCode) {
  EXPECT_EQ(code(R"({"type":"PUSH_REGISTER","provider":"gcm","token":"x"})"), "UNKNOWN_PROVIDER");
  EXPECT_EQ(code(R"({"type":"PUSH_REGISTER","provider":"apns","token":"nothex"})"), "BAD_PUSH_TOKEN");
  EXPECT_EQ(code(R"({"type":"PUSH_REGISTER","provider":"webpush","token":"{}"})"), "BAD_PUSH_TOKEN");
  EXPECT_EQ(code(R"({"type":"PUSH_REGISTER","token":"x"})"), "INVALID_ARGUMENT");
  EXPECT_EQ(code(R"({"type":"PUSH_REGISTER","provider":"fcm"})"), "INVALID_ARGUMENT");
}

TEST(PushFramesTest, EncodesTheAnswers) {
  EXPECT_EQ(encode_push_registered("r", PushProvider::kFcm),
            R"({"type":"PUSH_REGISTERED","ref":"r","provider":"fcm"})");
  EXPECT_EQ(encode_push_unregistered("r"), R"({"type":"PUSH_UNREGISTERED","ref":"r"})");
  EXPECT_EQ(encode_push_config("r", PushDoor{}),
            R"({"type":"PUSH_CONFIG","ref":"r","providers":[],"vapid_public_key":null})");
  EXPECT_EQ(encode_push_config("r", PushDoor{{PushProvider::kWebPush, PushProvider::kApns}, "BKey"}),
            R"({"type":"PUSH_CONFIG","ref":"r","providers":["webpush","apns"],"vapid_public_key":"BKey"})");
  EXPECT_EQ(encode_push_error("r", WireCode::kBadPushToken, "no"),
            R"({"type":"ERROR","ref":"r","code":"BAD_PUSH_TOKEN","message":"no"})");
}

TEST(PushFramesTest, AnswersRegisterTheCallersDeviceUpToTheBound) {
  auto clock = std::make_shared<ManualClock>(1'700'000'000'000);
  BackendContext ctx;
  ctx.clock = clock;
  auto backend = make_memory_inbox(ctx);
  const UserId bob = UserId::parse("bob").value();
  auto ask = [&](const std::string& device, const std::string& text) {
    clock->advance_ms(1);
    return answer_push_request(*backend, *clock, bob, DeviceId::parse(device).value(), "r",
                               *parse_push_request(text));
  };
  const std::string apns =
      R"({"type":"PUSH_REGISTER","provider":"apns","token":")" + std::string(64, 'a') + "\"}";
  EXPECT_EQ(ask("phone", apns), R"({"type":"PUSH_REGISTERED","ref":"r","provider":"apns"})");
  auto devices = PushRegistry(*backend).devices(bob).value();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices.begin()->first.str(), "phone");
  const std::string fcm = R"({"type":"PUSH_REGISTER","provider":"fcm","token":"t"})";
  for (size_t i = 1; i < kMaxPushDevices; ++i)
    ASSERT_NE(ask("d" + std::to_string(i), fcm).find("PUSH_REGISTERED"), std::string::npos);
  EXPECT_NE(ask("one-too-many", fcm).find(R"("code":"TOO_MANY_DEVICES")"), std::string::npos);
  EXPECT_EQ(ask("phone", R"({"type":"PUSH_UNREGISTER"})"), R"({"type":"PUSH_UNREGISTERED","ref":"r"})");
  EXPECT_NE(ask("one-too-many", fcm).find("PUSH_REGISTERED"), std::string::npos);
  EXPECT_NE(ask("x", R"({"type":"PUSH_REGISTER","provider":"gcm","token":"t"})").find("UNKNOWN_PROVIDER"),
            std::string::npos);
  // PUSH_CONFIG answers what the push role published.
  EXPECT_EQ(ask("phone", R"({"type":"PUSH_CONFIG"})"),
            R"({"type":"PUSH_CONFIG","ref":"r","providers":[],"vapid_public_key":null})");
  ASSERT_TRUE(publish_push_door(*backend, PushDoor{{PushProvider::kWebPush}, "BKey"}, clock->now_ms()).ok());
  EXPECT_EQ(ask("phone", R"({"type":"PUSH_CONFIG"})"),
            R"({"type":"PUSH_CONFIG","ref":"r","providers":["webpush"],"vapid_public_key":"BKey"})");
}

// A refused PUSH_REGISTER answers a code of the protocol's WireCode (docs/protocol.md "Errors"), counted by
// the gateway's error counter as every other refusal.
TEST(PushFramesTest, ABadPushRegisterGetsItsDocumentedWireCodeAndIsCounted) {
  EXPECT_EQ(wire_code_name(WireCode::kUnknownProvider), "UNKNOWN_PROVIDER");
  EXPECT_EQ(wire_code_name(WireCode::kBadPushToken), "BAD_PUSH_TOKEN");
  EXPECT_EQ(wire_code_name(WireCode::kTooManyDevices), "TOO_MANY_DEVICES");
  auto clock = std::make_shared<ManualClock>(1'700'000'000'000);
  BackendContext ctx;
  ctx.clock = clock;
  auto backend = make_memory_inbox(ctx);
  GatewayMetrics metrics;
  const UserId bob = UserId::parse("bob").value();
  auto ask = [&](const std::string& device, const std::string& text) {
    clock->advance_ms(1);
    return answer_push_request(*backend, *clock, bob, DeviceId::parse(device).value(), "r",
                               *parse_push_request(text), &metrics);
  };
  const std::string bad_token =
      ask("phone", R"({"type":"PUSH_REGISTER","provider":"apns","token":"nothex"})");
  EXPECT_TRUE(bad_token.starts_with(R"({"type":"ERROR","ref":"r","code":"BAD_PUSH_TOKEN","message":)"))
      << bad_token;
  EXPECT_EQ(metrics.errors(WireCode::kBadPushToken).Value(), 1);
  const std::string unknown = ask("phone", R"({"type":"PUSH_REGISTER","provider":"gcm","token":"t"})");
  EXPECT_TRUE(unknown.starts_with(R"({"type":"ERROR","ref":"r","code":"UNKNOWN_PROVIDER","message":)"))
      << unknown;
  EXPECT_EQ(metrics.errors(WireCode::kUnknownProvider).Value(), 1);
  const std::string fcm = R"({"type":"PUSH_REGISTER","provider":"fcm","token":"t"})";
  for (size_t i = 0; i < kMaxPushDevices; ++i)
    ASSERT_NE(ask("d" + std::to_string(i), fcm).find("PUSH_REGISTERED"), std::string::npos);
  const std::string full = ask("one-too-many", fcm);
  EXPECT_TRUE(full.starts_with(R"({"type":"ERROR","ref":"r","code":"TOO_MANY_DEVICES","message":)")) << full;
  EXPECT_EQ(metrics.errors(WireCode::kTooManyDevices).Value(), 1);
  EXPECT_EQ(metrics.errors(WireCode::kInvalidArgument).Value(), 0);
}

// A registration and its removal in the same millisecond (a client that registers and at once changes
// its mind): both cells would carry that millisecond as their version, and at an equal version the engines
// keep one of the two values, not the later write. The door's cell_version keeps the order.
TEST(PushFramesTest, AnUnregisterInTheSameMillisecondAsTheRegisterWins) {
  auto clock = std::make_shared<ManualClock>(1'700'000'000'000);  // never advanced
  BackendContext ctx;
  ctx.clock = clock;
  auto backend = make_memory_inbox(ctx);
  const UserId bob = UserId::parse("bob").value();
  const DeviceId phone = DeviceId::parse("phone").value();
  auto ask = [&](const std::string& text) {
    return answer_push_request(*backend, *clock, bob, phone, "r", *parse_push_request(text));
  };
  const std::string fcm = R"({"type":"PUSH_REGISTER","provider":"fcm","token":"t"})";
  for (int round = 0; round < 3; ++round) {
    ASSERT_NE(ask(fcm).find("PUSH_REGISTERED"), std::string::npos);
    EXPECT_EQ(PushRegistry(*backend).devices(bob).value().size(), 1u) << "round " << round;
    ASSERT_NE(ask(R"({"type":"PUSH_UNREGISTER"})").find("PUSH_UNREGISTERED"), std::string::npos);
    EXPECT_TRUE(PushRegistry(*backend).devices(bob).value().empty()) << "round " << round;
  }
}

}  // namespace
}  // namespace qim
