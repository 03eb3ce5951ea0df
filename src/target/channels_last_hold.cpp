// Tensors held channels-last (see channels_last_hold.h).
#include "target/channels_last_hold.h"

#include <algorithm>
#include <map>
#include <set>

namespace vtc {

namespace {

// Values some virtual value's mapping reads (its pieces' bases).
std::set<const Value*> mapped_bases(const StorageMap& storage) {
  std::set<const Value*> bases;
  for (const auto& [v, m] : storage.virtual_values)
    for (const Piece& p : m.pieces)
      if (p.base) bases.insert(static_cast<const Value*>(p.base->key));
  return bases;
}

} // namespace

void hold_channels_last(Program& p, const TakesChannelsLast& takes) {
  const std::set<const Value*> mapped = mapped_bases(p.storage);
  std::map<int, int> values_in_buffer;
  for (const auto& [v, b] : p.storage.buffer_of)
    ++values_in_buffer[b];
  for (const auto& [v, b] : p.storage.buffer_of) {
    const BufferInfo& info = p.buffers[size_t(b)];
    if (info.role != BufferRole::intermediate || info.alias_of >= 0 || v->type.rank() != 4 ||
        values_in_buffer[b] != 1 || p.storage.virtual_values.count(v) || mapped.count(v))
      continue;
    int writers = 0, readers = 0;
    bool held = true;
    for (const StepInfo& s : p.steps) {
      const bool writes = std::find(s.writes.begin(), s.writes.end(), b) != s.writes.end();
      const bool reads = std::find(s.reads.begin(), s.reads.end(), b) != s.reads.end();
      if (!writes && !reads) continue;
      held = !(writes && reads) && takes(s, v, writes);
      if (!held) break;
      ++(writes ? writers : readers);
    }
    if (held && writers == 1 && readers > 0) p.storage.channels_last.insert(v);
  }
}

} // namespace vtc
