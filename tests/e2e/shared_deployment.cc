// The deployment the e2e scenarios share: started once per test process (a gtest global environment),
// stopped cleanly at the end. Linked into the scenario binary only (the fault tests start their own).
#include <gtest/gtest.h>

#include <cstdlib>

#include "e2e/e2e_env.h"

namespace qim::e2e {

namespace {

class SharedQim : public ::testing::Environment {
 public:
  void SetUp() override {
    process_ = new_deployment("shared");
    auto st = process_->start();
    if (!st.ok()) {
      // Not ASSERT: a fatal failure here makes gtest report every test "skipped", which reads as "no
      // engine configured". A process that cannot start (e.g. its store unreachable) fails the run.
      ADD_FAILURE() << "the shared deployment did not start: " << st.error().to_string() << "\nlog tail:\n"
                    << process_->log_tail();
      process_.reset();  // now (it keeps its data: a test failed), not from exit, which destroys gtest
      std::exit(1);      // NOLINT(concurrency-mt-unsafe): no other thread runs yet
    }
  }
  void TearDown() override {
    if (process_ && process_->running()) {
      int code = process_->stop();
      EXPECT_EQ(code, 0) << "the deployment did not exit cleanly; log tail:\n" << process_->log_tail();
    }
    // Destroy it now, while gtest is alive: its keep-data check asks gtest whether anything failed, and
    // gtest destroys environments only from its own destructor at exit.
    process_.reset();
  }
  std::unique_ptr<Deployment> process_;
};

SharedQim* g_shared = static_cast<SharedQim*>(::testing::AddGlobalTestEnvironment(new SharedQim));

}  // namespace

Deployment& shared_qim() {
  return *g_shared->process_;
}

}  // namespace qim::e2e
