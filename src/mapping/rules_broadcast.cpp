// Rules for the ops that repeat data: Expand (read: broadcast, a size-1 input axis reads index
// 0) and Tile (read: each axis wraps, i mod n). Their write sides would need one input element
// to land in several places, which a one-to-one mapping cannot say; they exist only when the op
// repeats nothing.
#include "mapping/layout.h"
#include "mapping/rule_util.h"

namespace vtc {
namespace {

using namespace rule_util;

RuleResult expand_read(const Node& n) {
  const Shape& x = in_shape(n, 0);
  const Shape& y = out_shape(n, 0);
  size_t lead = y.size() - x.size();
  std::vector<IndexExpr> i = box_vars(full_box(y)), j;
  for (size_t d = 0; d < x.size(); ++d)
    j.push_back(x[d] == 1 ? IndexExpr::constant(0) : i[d + lead]);
  return one(single_piece(y, in_base(n, 0), j));
}

RuleResult expand_write(const Node& n) {
  const Shape& x = in_shape(n, 0);
  const Shape& y = out_shape(n, 0);
  if (shape_numel(x) != shape_numel(y))
    return RuleResult::impossible(
        n, "write side impossible: Expand of " + shape_str(x) + " to " + shape_str(y) +
               " repeats each input element " +
               std::to_string(shape_numel(y) / std::max<int64_t>(shape_numel(x), 1)) +
               " times (not injective)");
  return first_input(n, reshape_mapping(x, out_base(n, 0)));
}

RuleResult tile_read(const Node& n) {
  const Shape& x = in_shape(n, 0);
  const Shape& y = out_shape(n, 0);
  std::vector<IndexExpr> i = box_vars(full_box(y)), j;
  for (size_t d = 0; d < x.size(); ++d)
    j.push_back(x[d] > 0 ? mod(i[d], x[d]) : i[d]);
  return one(single_piece(y, in_base(n, 0), j));
}

RuleResult tile_write(const Node& n) {
  const Shape& x = in_shape(n, 0);
  const Shape& y = out_shape(n, 0);
  if (shape_numel(x) != shape_numel(y))
    return RuleResult::impossible(n, "write side impossible: Tile of " + shape_str(x) + " to " +
                                         shape_str(y) + " repeats input elements (not injective)");
  return first_input(n, identity_mapping(out_base(n, 0)));
}

} // namespace

void add_broadcast_rules(std::vector<MovementRule>& t) {
  // op         read side     write side
  t.push_back({"Expand", expand_read, expand_write});
  t.push_back({"Tile", tile_read, tile_write});
}

} // namespace vtc
