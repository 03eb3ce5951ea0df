// The copy work of each data-movement op, split into units (one per data input and output pair
// that moves elements), so that a partly virtualised node still knows what its copy kernel has
// left to do. Fractions say which share of the input the unit reads and of the output it writes:
//   Split x -> y_k        reads |y_k| of x, writes all of y_k
//   Concat x_j -> y       reads all of x_j, writes |x_j| of y
//   ScatterND             data -> y (the clone), updates -> y (|updates| of y, plus the indices)
//   Pad                   x -> interior of y, and a border fill with no input
//   Gather, Slice         read |y| of x (plus the indices for Gather), write all of y
//   everything else       reads x once (Expand and Tile too: the input is shared), writes y
#include <algorithm>

#include "mapping/rules.h"
#include "strategy/vtog.h"

namespace vtc {
namespace {

int64_t bytes_of(const Value* v) {
  return v && v->has_type ? int64_t(v->type.nbytes()) : 0;
}

double ratio(int64_t part, int64_t whole) {
  return whole > 0 ? std::min(1.0, double(part) / double(whole)) : 1.0;
}

bool is_scatter(const std::string& op) {
  return op == "ScatterND" || op == "ScatterElements" || op == "Scatter";
}

bool is_gather(const std::string& op) {
  return op == "Gather" || op == "GatherElements" || op == "GatherND";
}

} // namespace

void add_movement_units(Vtog& g, int m) {
  const Node& n = *g.movement[size_t(m)].node;
  auto add = [&](int in_slot, int out_slot, double read_fraction, double write_fraction,
                 int64_t extra, std::optional<Mapping> scatter) {
    const Value* in = in_slot >= 0 ? n.input(size_t(in_slot)) : nullptr;
    const Value* out = n.output(size_t(out_slot));
    if (!out || (in_slot >= 0 && !in)) return;
    VtogUnit u;
    u.movement = m;
    u.in = in ? g.tensor_of(in) : -1;
    u.out = g.tensor_of(out);
    u.in_slot = in_slot;
    u.out_slot = out_slot;
    u.read_fraction = in ? read_fraction : 0;
    u.write_fraction = write_fraction;
    u.extra_bytes = extra;
    u.scatter = std::move(scatter);
    u.bytes =
        int64_t(u.read_fraction * double(bytes_of(in)) + u.write_fraction * double(bytes_of(out))) +
        extra;
    g.movement[size_t(m)].units.push_back(int(g.units.size()));
    g.units.push_back(std::move(u));
  };

  const Value* x = n.input(0);
  const Value* y = n.output(0);
  if (n.op == "Concat") {
    for (size_t j = 0; j < n.num_inputs(); ++j)
      add(int(j), 0, 1, ratio(bytes_of(n.input(j)), bytes_of(y)), 0, std::nullopt);
  } else if (n.op == "Split") {
    for (size_t k = 0; k < n.outputs.size(); ++k)
      add(0, int(k), ratio(bytes_of(n.output(k)), bytes_of(x)), 1, 0, std::nullopt);
  } else if (is_scatter(n.op)) {
    add(0, 0, 1, 1, 0, std::nullopt);
    std::optional<Mapping> scatter;
    RuleResult w = write_side(n);
    if (w.ok() && w.mappings.size() > 2 && w.mappings[2]) scatter = *w.mappings[2];
    add(2, 0, 1, ratio(bytes_of(n.input(2)), bytes_of(y)), bytes_of(n.input(1)),
        std::move(scatter));
  } else if (n.op == "Pad") {
    add(0, 0, 1, ratio(bytes_of(x), bytes_of(y)), 0, std::nullopt);
    if (bytes_of(y) > bytes_of(x))
      add(-1, 0, 0, ratio(bytes_of(y) - bytes_of(x), bytes_of(y)), 0, std::nullopt);
  } else if (is_gather(n.op)) {
    add(0, 0, ratio(bytes_of(y), bytes_of(x)), 1, bytes_of(n.input(1)), std::nullopt);
  } else if (n.op == "Slice") {
    add(0, 0, ratio(bytes_of(y), bytes_of(x)), 1, 0, std::nullopt);
  } else {
    add(0, 0, 1, 1, 0, std::nullopt);
  }
}

} // namespace vtc
