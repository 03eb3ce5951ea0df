// Positions of a kernel's buffers and integers in its site table.
#include "codegen/site_args.h"

namespace vtc {

std::string SiteArgs::buffer(int buffer) {
  for (size_t k = 0; k < buffer_of_position_.size(); ++k)
    if (buffer_of_position_[k] == buffer) return "buf[site[" + std::to_string(k) + "]]";
  values_.push_back(buffer);
  buffer_of_position_.push_back(buffer);
  return "buf[site[" + std::to_string(values_.size() - 1) + "]]";
}

std::string SiteArgs::integer(int64_t value) {
  values_.push_back(value);
  buffer_of_position_.push_back(-1);
  return "site[" + std::to_string(values_.size() - 1) + "]";
}

} // namespace vtc
