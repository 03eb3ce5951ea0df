// Interning of bases: one global table guarded by a mutex, entries never freed.
#include "mapping/base.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace vtc {

const Base* intern_base(const void* key, const std::string& name, const Shape& shape,
                        std::optional<Interval> values) {
  using Key = std::tuple<const void*, std::string, Shape, bool, int64_t, int64_t>;
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<Base>> table;
  Key k{key, name, shape, values.has_value(), values ? values->lo : 0, values ? values->hi : 0};
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = table[k];
  if (!slot) slot = std::make_unique<Base>(Base{key, name, shape, values});
  return slot.get();
}

} // namespace vtc
