// Rules for the view-like ops: Reshape, Flatten, Squeeze, Unsqueeze and Identity (the same
// bytes under a new shape: both sides are the row-major reinterpretation), Transpose (permuted
// axes), DepthToSpace and SpaceToDepth (a reshape-transpose-reshape, written out directly).
// Every one is a bijection, so both directions always exist and are injective.
#include "mapping/layout.h"
#include "mapping/rules.h"

namespace vtc {
namespace {

const Base* in_base(const Node& n, size_t i) {
  return value_base(n.input(i));
}
const Base* out_base(const Node& n, size_t i) {
  return value_base(n.output(i));
}

// Reshape family: y is x reinterpreted, and x is y reinterpreted.
RuleResult same_bytes_read(const Node& n) {
  return {{reshape_mapping(n.output(0)->type.shape, in_base(n, 0))}, {}, {}};
}
RuleResult same_bytes_write(const Node& n) {
  RuleResult r;
  r.mappings.resize(n.num_inputs());
  r.mappings[0] = reshape_mapping(n.input(0)->type.shape, out_base(n, 0));
  return r;
}

std::vector<int64_t> perm_of(const Node& n) {
  int64_t rank = n.input(0)->type.rank();
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (!n.has_attr("perm"))
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  return perm;
}
RuleResult transpose_read_rule(const Node& n) {
  return {{transpose_read(in_base(n, 0), perm_of(n))}, {}, {}};
}
RuleResult transpose_write_rule(const Node& n) {
  return {{transpose_write(in_base(n, 0), out_base(n, 0), perm_of(n))}, {}, {}};
}

// DepthToSpace: y[n, c, h, w] = x[n, ch, h floordiv b, w floordiv b] where the channel is
// ((h mod b)·b + w mod b)·C + c (DCR) or (c·b + h mod b)·b + w mod b (CRD); C = y's channels.
bool is_dcr(const Node& n) {
  return n.attr_string("mode", "DCR") == "DCR";
}

RuleResult depth_to_space_read(const Node& n) {
  int64_t b = n.attr_int("blocksize");
  const Shape& y = n.output(0)->type.shape;
  std::vector<IndexExpr> i = box_vars(full_box(y));
  IndexExpr bi = mod(i[2], b), bj = mod(i[3], b);
  IndexExpr ch = is_dcr(n) ? (bi * b + bj) * y[1] + i[1] : (i[1] * b + bi) * b + bj;
  return {
      {single_piece(y, in_base(n, 0), {i[0], ch, floordiv(i[2], b), floordiv(i[3], b)})}, {}, {}};
}
RuleResult depth_to_space_write(const Node& n) {
  int64_t b = n.attr_int("blocksize");
  const Shape& x = n.input(0)->type.shape;
  int64_t c_out = n.output(0)->type.shape[1];
  std::vector<IndexExpr> j = box_vars(full_box(x));
  IndexExpr c, bi, bj;
  if (is_dcr(n)) {
    IndexExpr q = floordiv(j[1], c_out);
    c = mod(j[1], c_out), bi = floordiv(q, b), bj = mod(q, b);
  } else {
    c = floordiv(j[1], b * b), bi = mod(floordiv(j[1], b), b), bj = mod(j[1], b);
  }
  return {{single_piece(x, out_base(n, 0), {j[0], c, j[2] * b + bi, j[3] * b + bj})}, {}, {}};
}

// SpaceToDepth: y[n, c', h', w'] = x[n, c' mod C, h'·b + q floordiv b, w'·b + q mod b] with
// q = c' floordiv C; C = x's channels.
RuleResult space_to_depth_read(const Node& n) {
  int64_t b = n.attr_int("blocksize");
  const Shape& y = n.output(0)->type.shape;
  int64_t c_in = n.input(0)->type.shape[1];
  std::vector<IndexExpr> i = box_vars(full_box(y));
  IndexExpr q = floordiv(i[1], c_in);
  return {{single_piece(y, in_base(n, 0),
                        {i[0], mod(i[1], c_in), i[2] * b + floordiv(q, b), i[3] * b + mod(q, b)})},
          {},
          {}};
}
RuleResult space_to_depth_write(const Node& n) {
  int64_t b = n.attr_int("blocksize");
  const Shape& x = n.input(0)->type.shape;
  std::vector<IndexExpr> j = box_vars(full_box(x));
  IndexExpr q = mod(j[2], b) * b + mod(j[3], b);
  return {{single_piece(x, out_base(n, 0),
                        {j[0], q * x[1] + j[1], floordiv(j[2], b), floordiv(j[3], b)})},
          {},
          {}};
}

} // namespace

void add_view_rules(std::vector<MovementRule>& t) {
  // op             read side              write side
  t.push_back({"Reshape", same_bytes_read, same_bytes_write});
  t.push_back({"Flatten", same_bytes_read, same_bytes_write});
  t.push_back({"Squeeze", same_bytes_read, same_bytes_write});
  t.push_back({"Unsqueeze", same_bytes_read, same_bytes_write});
  t.push_back({"Identity", same_bytes_read, same_bytes_write});
  t.push_back({"Transpose", transpose_read_rule, transpose_write_rule});
  t.push_back({"DepthToSpace", depth_to_space_read, depth_to_space_write});
  t.push_back({"SpaceToDepth", space_to_depth_read, space_to_depth_write});
}

} // namespace vtc
