// Tests of coalescing (src/mapping/coalesce.h): worked examples (the retinanet heads' transpose,
// dense and sliced tensors, unit dimensions, a gather, pieces of a concatenation) and a
// property test: on random chains of data-movement ops, the chain's read mapping and the dense
// output's identity coalesced together land, at every index of the merged space, where the
// originals land at the same row-major position, and still read the reference's elements.
#include <gtest/gtest.h>

#include "gen_ops.h"
#include "mapping/coalesce.h"
#include "mapping/layout.h"

namespace vtc::test {
namespace {

constexpr int kChains = 300;

// The row-major index of element `k` of `shape`.
Shape unflatten_at(int64_t k, const Shape& shape) {
  Shape i(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    i[d] = k % shape[d];
    k /= shape[d];
  }
  return i;
}

int64_t flatten_at(const Shape& i, const Shape& shape) {
  int64_t k = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    k = k * shape[d] + i[d];
  return k;
}

TEST(Coalesce, TransposedHeadRowsOfTenBecomeRowsOfThirty) {
  // retinanet's heads: [1, 3, 10, 16, 16] -> Transpose (0, 3, 4, 1, 2) -> [1, 16, 16, 3, 10].
  const Base* x = named_base("x", {1, 3, 10, 16, 16});
  const Base* y = named_base("y", {1, 16, 16, 3, 10});
  CoalescedSpace s = coalesce({identity_mapping(y), transpose_read(x, {0, 3, 4, 1, 2})});
  EXPECT_EQ(s.shape, (Shape{256, 30}));
  EXPECT_EQ(to_string(s.mappings[0]),
            "map [256,30]\n  piece 0: [0:256, 0:30] -> y[0, i0 floordiv 16, i0 mod 16, i1 "
            "floordiv 10, i1 mod 10]\n");
  EXPECT_EQ(to_string(flat_offset(s.mappings[0].pieces[0])), "i0*30 + i1");
  EXPECT_EQ(to_string(flat_offset(s.mappings[1].pieces[0])), "i0 + i1*256");
}

TEST(Coalesce, WhatStaysAffineMerges) {
  const Base* x = named_base("x", {4, 6, 10});
  // One tensor alone: a single row.
  EXPECT_EQ(coalesce({identity_mapping(x)}).shape, (Shape{240}));
  // A transpose of the last two dimensions keeps three: no two neighbours merge on both sides.
  const Base* t = named_base("t", {4, 10, 6});
  EXPECT_EQ(coalesce({identity_mapping(t), transpose_read(x, {0, 2, 1})}).shape, (Shape{4, 10, 6}));
  // A slice of the last dimension: rows of 5 with gaps stay rows; the outer two merge.
  const Base* c = named_base("c", {4, 6, 5});
  std::vector<IndexExpr> j = box_vars(full_box({4, 6, 5}));
  CoalescedSpace sliced =
      coalesce({identity_mapping(c), single_piece({4, 6, 5}, x, {j[0], j[1], j[2] + 3})});
  EXPECT_EQ(sliced.shape, (Shape{24, 5}));
  // Unit dimensions always go.
  const Base* u = named_base("u", {1, 7, 1, 3, 1});
  EXPECT_EQ(coalesce({transpose_read(u, {0, 2, 1, 4, 3})}).shape, (Shape{21}));
  // A gather's rows x[ids[0, i1], i2]: the unit dimension goes, though its neighbour is an
  // index of a load; that neighbour and the row do not merge.
  const Base* ids = named_base("ids", {1, 16}, Interval{0, 7});
  const Base* table = named_base("table", {8, 4});
  std::vector<IndexExpr> g = box_vars(full_box({1, 16, 4}));
  CoalescedSpace rows =
      coalesce({single_piece({1, 16, 4}, table, {IndexExpr::load(ids, {g[0], g[1]}), g[2]})});
  EXPECT_EQ(rows.shape, (Shape{16, 4}));
  EXPECT_EQ(to_string(rows.mappings[0]),
            "map [16,4]\n  piece 0: [0:16, 0:4] -> table[load(ids, 0, i0), i1]\n");
}

TEST(Coalesce, PiecesMergeAlongTheirOuterDimensionOnly) {
  // Concat of a[2, 3] and b[2, 3] along axis 0: two pieces split on the outer dimension, which
  // stay two pieces over [12].
  const Base* a = named_base("a", {2, 3});
  const Base* b = named_base("b", {2, 3});
  Mapping rows{{4, 3}, {}};
  std::vector<IndexExpr> i = box_vars(full_box({4, 3}));
  Mapping pa = single_piece({4, 3}, a, {i[0], i[1]});
  pa.pieces[0].guard = {{0, 2}, {0, 3}};
  Mapping pb = single_piece({4, 3}, b, {i[0] - 2, i[1]});
  pb.pieces[0].guard = {{2, 4}, {0, 3}};
  rows.pieces = {pa.pieces[0], pb.pieces[0]};
  EXPECT_EQ(coalesce({rows}).shape, (Shape{12}));
  // Along axis 1 the pieces split the inner dimension: nothing merges.
  Mapping cols{{2, 6}, {}};
  std::vector<IndexExpr> k = box_vars(full_box({2, 6}));
  Mapping qa = single_piece({2, 6}, a, {k[0], k[1]});
  qa.pieces[0].guard = {{0, 2}, {0, 3}};
  Mapping qb = single_piece({2, 6}, b, {k[0], k[1] - 3});
  qb.pieces[0].guard = {{0, 2}, {3, 6}};
  cols.pieces = {qa.pieces[0], qb.pieces[0]};
  EXPECT_EQ(coalesce({cols}).shape, (Shape{2, 6}));
}

TEST(CoalesceProperty, MergedMappingsLandWhereTheOriginalsDo) {
  int merged = 0, kept = 0, unrepresentable = 0;
  for (int k = 0; k < kChains; ++k) {
    Builder b(47000 + uint64_t(k));
    Value* x0 = b.input(random_shape(b, 1, 5, 6));
    std::vector<ChainStep> steps = random_chain(b, x0, false, int(b.uniform(1, 3)));
    ASSERT_FALSE(steps.empty());
    Result<Mapping> m = compose_read_chain(steps);
    if (!m.ok()) {
      ++unrepresentable;
      continue;
    }
    const Value* v = steps.back().node->output(steps.back().out);
    const Shape& shape = v->type.shape;
    const BaseEnv env = chain_env(b, steps);
    const Mapping out = identity_mapping(value_base(v));
    CoalescedSpace s = coalesce({out, *m});
    SCOPED_TRACE("chain " + std::to_string(k) + " " + shape_str(shape) + "\n" + to_string(*m));
    ASSERT_EQ(shape_numel(s.shape), shape_numel(shape));
    ASSERT_LE(s.shape.size(), std::max<size_t>(shape.size(), 1));
    auto at = [&](const Shape& i) { return unflatten_at(flatten_at(i, s.shape), shape); };
    ASSERT_EQ(check_same_as(s.mappings[1], *m, at, env), "") << to_string(s.mappings[1]);
    ASSERT_EQ(check_same_as(s.mappings[0], out, at, env), "") << to_string(s.mappings[0]);
    ASSERT_EQ(check_read(s.mappings[1], b.env.at(v).reshaped(s.shape), env), "");
    (s.shape.size() < shape.size() ? merged : kept)++;
  }
  std::printf("[ property ] index spaces: %d coalesced, %d kept, %d chains not one mapping\n",
              merged, kept, unrepresentable);
  EXPECT_GE(merged, kChains / 4);
}

} // namespace
} // namespace vtc::test
