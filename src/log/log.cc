#include "log/log.h"

#include <future>

namespace qim {

Result<Offset> Log::append_sync(uint32_t partition, std::string key, std::string value) {
  std::promise<Result<Offset>> done;
  auto fut = done.get_future();
  append(partition, std::move(key), std::move(value),
         [&done](Result<Offset> r) { done.set_value(std::move(r)); });
  return fut.get();
}

}  // namespace qim
