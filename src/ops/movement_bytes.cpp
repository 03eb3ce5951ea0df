// Copy-kernel traffic of each data-movement op.
#include "ops/movement_bytes.h"

namespace vtc {

namespace {

int64_t bytes_of(const Value* v) {
  return v && v->has_type ? int64_t(v->type.nbytes()) : 0;
}

int64_t output_bytes(const Node& n) {
  int64_t b = 0;
  for (const Value* v : n.outputs)
    b += bytes_of(v);
  return b;
}

} // namespace

int64_t data_movement_bytes(const Node& n) {
  int64_t written = output_bytes(n);
  if (n.op == "Expand" || n.op == "Tile") return written + bytes_of(n.input(0));
  if (n.op == "Pad") return written + bytes_of(n.input(0));
  if (n.op == "ScatterND" || n.op == "ScatterElements" || n.op == "Scatter")
    return 2 * written + 2 * bytes_of(n.input(2)) + bytes_of(n.input(1));
  if (n.op == "Gather" || n.op == "GatherElements" || n.op == "GatherND")
    return 2 * written + bytes_of(n.input(1));
  return 2 * written; // every written element is read once
}

} // namespace vtc
