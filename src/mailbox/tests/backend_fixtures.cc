// The registry of backends under the contract suite. To add one: write its fixture function (see
// backend_fixture.h), add its source and library in tests/CMakeLists.txt, and one line here.
#include "mailbox/tests/backend_fixture.h"

namespace qim::test {

std::vector<BackendFixture> contract_backends() {
  return {
      memory_fixture(),
      embedded_fixture(),
#ifdef QIM_TEST_WITH_REDIS
      redis_fixture(),
#endif
#ifdef QIM_TEST_WITH_SCYLLA
      scylla_fixture(),
#endif
  };
}

}  // namespace qim::test
