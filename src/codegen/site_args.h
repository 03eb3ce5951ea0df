// The per-site argument table of a generated kernel. A kernel names the buffers it reads or
// writes, and the integers that differ from one place it runs at to another (the step an index
// check reports), by their position in this table: buffer k is buf[site[k]], integer k is
// site[k]. Each step that runs the kernel passes its own table, so steps whose kernels differ
// only in their buffers generate the same text and share one compiled kernel (the layers of a
// deep model compile once). Positions are given in the order the kernel first asks for them;
// a buffer asked for twice keeps its first position.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vtc {

class SiteArgs {
public:
  // "buf[site[k]]": the address of program buffer `buffer`.
  std::string buffer(int buffer);
  // "site[k]": the integer `value`.
  std::string integer(int64_t value);
  // The table: buffer ids and integers, by position.
  const std::vector<int64_t>& values() const { return values_; }

private:
  std::vector<int64_t> values_;
  std::vector<int> buffer_of_position_; // -1 where the position holds an integer
};

} // namespace vtc
