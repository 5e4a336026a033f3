// A failed connection says what to do (issue 37, item 3). The messages are those the client library
// gives for each case (checked against a real `qim up` by tests/cli/first_hour_test.sh).
#include "ctl/session.h"

#include <gtest/gtest.h>

namespace qim::ctl {
namespace {

std::string explained(const char* url, const char* message) {
  Connection c;
  c.url = url;
  return explain_connection_error(c, Error(Errc::kTransport, message)).message();
}

TEST(ExplainConnectionError, SaysWhatToDo) {
  EXPECT_NE(explained("ws://127.0.0.1:7400", "client: connect to 127.0.0.1:7400: Connection refused")
                .find("is `qim up` running? Give the address its banner prints after \"clients connect to\" "
                      "with --url or QIM_URL"),
            std::string::npos);
  EXPECT_NE(
      explained("ws://127.0.0.1:7401",
                "client: WebSocket handshake with 127.0.0.1:7401: The WebSocket handshake was declined by "
                "the remote peer")
          .find("is it the admin port"),
      std::string::npos);
  EXPECT_NE(explained("wss://127.0.0.1:7400", "client: 127.0.0.1:7400: TLS handshake: wrong version number")
                .find("does not speak TLS: use ws://"),
            std::string::npos);
  EXPECT_NE(
      explained("wss://127.0.0.1:7400", "client: 127.0.0.1:7400: TLS handshake: certificate verify failed")
          .find("pass --ca FILE (or QIM_TLS_CA)"),
      std::string::npos);
  EXPECT_NE(explained("ws://127.0.0.1:7400", "client: WebSocket handshake with 127.0.0.1:7400: end of stream")
                .find("use wss:// and --ca"),
            std::string::npos);
  // Anything else is left as it is.
  EXPECT_EQ(explained("ws://127.0.0.1:7400", "client: something else"), "client: something else");
}

}  // namespace
}  // namespace qim::ctl
