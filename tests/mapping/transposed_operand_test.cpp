// Tests of transposed_operand and swap_last_two (src/mapping/transposed_operand.h): a virtual
// transpose of a K cache is read through the cache's own layout, rows of K contiguous elements;
// a value whose rows are runs already, or whose transpose has no runs either, keeps its own
// mapping. Property test: on random chains of data-movement ops (some ending in a transpose of
// the last two dimensions), both views at every index (.., j, i) land where the value's own
// mapping does at (.., i, j), and read the reference's transpose.
#include <gtest/gtest.h>

#include <numeric>

#include "gen_ops.h"
#include "mapping/base.h"
#include "mapping/contiguity.h"
#include "mapping/layout.h"
#include "mapping/transposed_operand.h"

namespace vtc::test {
namespace {

constexpr int kChains = 300;

TEST(TransposedOperand, KCacheTransposeReadsCacheRows) {
  const Base* k = named_base("k", {8, 16, 128}); // [heads, positions, head dim]
  const Base* kt = named_base("kt", {8, 128, 16});
  std::optional<Mapping> t = transposed_operand(transpose_read(k, {0, 2, 1}), kt, 4);
  ASSERT_TRUE(t);
  EXPECT_EQ(to_string(*t), "map [8,16,128]\n  piece 0: [0:8, 0:16, 0:128] -> k[i0, i1, i2]\n");
}

TEST(TransposedOperand, NoneWhenRowsAreRunsOrColumnsAreNot) {
  const Base* x = named_base("x", {4, 6, 5});
  // Physical: its rows are runs already.
  EXPECT_FALSE(transposed_operand(transpose_read(x, {0, 1, 2}), named_base("y", {4, 6, 5}), 4));
  // A transpose of the outer two dimensions: neither rows nor columns of the view are runs.
  EXPECT_FALSE(transposed_operand(transpose_read(x, {2, 1, 0}), named_base("w", {5, 6, 4}), 4));
}

TEST(SwapLastTwo, SwapsGuardsAndVariables) {
  const Base* a = named_base("a", {3, 4});
  const Base* b = named_base("b", {3, 2});
  // Concat(a, b) along axis 1: [3, 6] in two pieces.
  Mapping concat{{3, 6}, {}};
  Box ga{{0, 3}, {0, 4}}, gb{{0, 3}, {4, 6}};
  concat.pieces.push_back(Piece{ga, {}, a, box_vars(ga), 0});
  std::vector<IndexExpr> jb = box_vars(gb);
  jb[1] = jb[1] - 4;
  concat.pieces.push_back(Piece{gb, {}, b, jb, 0});
  EXPECT_EQ(to_string(swap_last_two(concat)), "map [6,3]\n"
                                              "  piece 0: [0:4, 0:3] -> a[i1, i0]\n"
                                              "  piece 1: [4:6, 0:3] -> b[i1, i0 - 4]\n");
  // Batch dimensions keep their variables.
  const Base* x = named_base("x", {2, 5, 7});
  EXPECT_EQ(to_string(swap_last_two(identity_mapping(x))),
            "map [2,7,5]\n  piece 0: [0:2, 0:7, 0:5] -> x[i0, i2, i1]\n");
}

Shape swapped(const Shape& i) {
  Shape s = i;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return s;
}

bool degenerate(const Mapping& m) {
  for (const Piece& p : m.pieces)
    for (const Range& r : p.guard)
      if (r.size() <= 0) return true;
  return false;
}

TEST(TransposedOperandProperty, SwappedViewsAreTheMappingAtTheSwappedIndex) {
  int swapped_checked = 0, transposed = 0, kept = 0, unrepresentable = 0;
  for (int k = 0; k < kChains; ++k) {
    Builder b(47000 + uint64_t(k));
    Value* x0 = b.input(random_shape(b, 2, 4, 6));
    std::vector<ChainStep> steps = random_chain(b, x0, false, int(b.uniform(1, 3)));
    ASSERT_FALSE(steps.empty());
    Value* v = steps.back().node->output(steps.back().out);
    if (v->type.rank() >= 2 && b.coin()) {
      // End in a transpose of the last two dimensions: a K^T whose rows are not runs.
      std::vector<int64_t> perm(size_t(v->type.rank()));
      std::iota(perm.begin(), perm.end(), int64_t(0));
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      Node* t = b.node("Transpose", {v}, 1, {{"perm", perm}});
      steps.push_back({t, 0, 0, read_side(*t)});
      v = t->output(0);
    }
    Result<Mapping> m = compose_read_chain(steps);
    if (!m.ok()) {
      ++unrepresentable;
      continue;
    }
    const Shape& shape = v->type.shape;
    if (shape.size() < 2 || degenerate(*m)) continue;
    const BaseEnv env = chain_env(b, steps);
    SCOPED_TRACE("chain " + std::to_string(k) + " " + shape_str(shape) + "\n" + to_string(*m));
    // The reference: the value transposed in its last two dimensions.
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), int64_t(0));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    const Tensor& expected = b.env.at(b.node("Transpose", {v}, 1, {{"perm", perm}})->output(0));

    Mapping s = swap_last_two(*m);
    ASSERT_EQ(s.shape, swapped(shape));
    ASSERT_EQ(check_same_as(s, *m, swapped, env), "") << to_string(s);
    ASSERT_EQ(check_read(s, expected, env), "") << to_string(s);
    ++swapped_checked;

    std::optional<Mapping> t = transposed_operand(*m, value_base(v), 4);
    if (!t) {
      ++kept;
      continue;
    }
    ASSERT_EQ(t->shape, swapped(shape));
    ASSERT_EQ(check_same_as(*t, *m, swapped, env), "") << to_string(*t);
    ASSERT_EQ(check_read(*t, expected, env), "") << to_string(*t);
    EXPECT_LE(contiguity(*m, 4).run, 1);
    EXPECT_EQ(contiguity(*t, 4).run % shape[shape.size() - 2], 0) << to_string(*t);
    ++transposed;
  }
  std::printf("[ property ] swap_last_two: %d checked; transposed_operand: %d read through the "
              "transpose, %d kept; %d chains not one mapping\n",
              swapped_checked, transposed, kept, unrepresentable);
  EXPECT_GE(swapped_checked, kChains / 2);
  EXPECT_GE(transposed, kChains / 10);
}

} // namespace
} // namespace vtc::test
