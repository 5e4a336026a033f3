// The registry of inbox backends under the inbox suites. To add one: its fixture function in its own
// file, its source in tests/CMakeLists.txt, and one line here.
#include "inbox/tests/inbox_fixture.h"

namespace qim::test {

std::vector<InboxFixture> inbox_backends() {
  return {
      memory_inbox_fixture(),
      embedded_inbox_fixture(),
#ifdef QIM_TEST_WITH_REDIS_INBOX
      redis_inbox_fixture(),
#endif
#ifdef QIM_TEST_WITH_CQL_INBOX
      cql_inbox_fixture(),
#endif
  };
}

}  // namespace qim::test
