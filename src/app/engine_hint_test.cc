// An engine that cannot be reached names the variable to check (issue 37, item 3; docs/operations.md).
#include "app/engine_hint.h"

#include <gtest/gtest.h>

#include <map>

namespace qim {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(EngineHint, NamesTheVariableOfTheEngineTheMessageIsAbout) {
  auto env = env_of({{"QIM_MAILBOX_STORE_BACKEND", "redis"},
                     {"QIM_MAILBOX_REDIS", "127.0.0.1:1"},
                     {"QIM_LOG_BACKEND", "kafka"},
                     {"QIM_KAFKA_BROKERS", "127.0.0.1:2"}});
  Error redis = with_engine_hint(Error(Errc::kTransport, "redis 127.0.0.1:1: Connection refused"), env);
  EXPECT_EQ(redis.message(),
            "redis 127.0.0.1:1: Connection refused; is the engine running? check QIM_MAILBOX_REDIS (now "
            "'127.0.0.1:1')");
  EXPECT_EQ(redis.code(), Errc::kTransport);
  Error kafka = with_engine_hint(Error(Errc::kTimeout, "no answer from 127.0.0.1:2 within 10 s"), env);
  EXPECT_NE(kafka.message().find("check QIM_KAFKA_BROKERS (now '127.0.0.1:2')"), std::string::npos);
  EXPECT_EQ(kafka.message().find("QIM_MAILBOX_REDIS"), std::string::npos) << kafka.message();
}

TEST(EngineHint, NamesEveryEngineInUseWhenTheMessageNamesNone_AndAnUnsetOnesDefault) {
  auto env = env_of({{"QIM_MAILBOX_STORE_BACKEND", "scylla"}});
  Error e = with_engine_hint(Error(Errc::kTimeout, "no answer"), env);
  EXPECT_EQ(e.message(),
            "no answer; is the engine running? check QIM_CQL_HOSTS (unset: the default 127.0.0.1)");
}

TEST(EngineHint, LeavesOtherErrorsAndTheEmbeddedDefaultAlone) {
  EXPECT_EQ(with_engine_hint(Error(Errc::kConfig, "bad"), env_of({})).message(), "bad");
  EXPECT_EQ(with_engine_hint(Error(Errc::kTransport, "x"), env_of({})).message(), "x");
}

}  // namespace
}  // namespace qim
