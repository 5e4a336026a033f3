// The Log contract on the embedded log (label unit).
#include "log/embedded/embedded_log.h"
#include "log/testing/temp_dir.h"
#include "log/tests/log_contract.h"

namespace qim::testing {
namespace {

class EmbeddedLogUnderTest final : public LogUnderTest {
 public:
  Result<std::unique_ptr<Log>> open(uint32_t partitions, size_t max_record_bytes,
                                    std::shared_ptr<const Clock> clock) override {
    EmbeddedLogOptions o;
    o.dir = dir_.sub("log");
    o.name = "contract";
    o.partitions = partitions;
    o.max_record_bytes = max_record_bytes;
    o.clock = std::move(clock);
    QIM_ASSIGN_OR_RETURN(auto log, EmbeddedLog::open(std::move(o)));
    return std::unique_ptr<Log>(std::move(log));
  }
  bool multi_instance() const override { return false; }

 private:
  TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(Embedded, LogContractTest,
                         ::testing::Values(LogBackend{
                             "embedded", [] { return std::string(); },
                             [] { return std::make_unique<EmbeddedLogUnderTest>(); }}),
                         backend_name);

}  // namespace
}  // namespace qim::testing
