#include "app/group_store_metrics.h"

#include <fmt/format.h>

namespace qim {

std::string group_store_prometheus(const GroupStore* store) {
  if (store == nullptr) return "";
  const OpCounts ops = store->op_counts();
  return fmt::format(
      "# HELP qim_group_store_ops_total Group store operations by kind (reads: loads and point reads)\n"
      "# TYPE qim_group_store_ops_total counter\n"
      "qim_group_store_ops_total{{kind=\"insert\"}} {}\n"
      "qim_group_store_ops_total{{kind=\"update\"}} {}\n"
      "qim_group_store_ops_total{{kind=\"read\"}} {}\n",
      ops.inserts, ops.updates, ops.reads);
}

}  // namespace qim
