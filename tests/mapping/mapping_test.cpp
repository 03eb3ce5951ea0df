// Mapping operations on worked examples: compose (piecewise inner splitting outer guards),
// bounds, contiguity on the paper's examples (§4.3–4.4), injective / covers / inverse.
#include <gtest/gtest.h>

#include "harness.h"
#include "mapping/analysis.h"
#include "mapping/compose.h"
#include "mapping/contiguity.h"
#include "mapping/layout.h"

namespace vtc::test {
namespace {

Tensor i64s(const std::vector<int64_t>& v) {
  return Tensor::from<int64_t>({int64_t(v.size())}, v);
}

TEST(Compose, PiecewiseInnerSplitsTheOuterGuard) {
  const Base* a = named_base("a", {2, 3});
  const Base* b = named_base("b", {2, 3});
  const Base* w = named_base("w", {2, 6});
  Mapping concat{{2, 6}, {}};
  Box ga{{0, 2}, {0, 3}}, gb{{0, 2}, {3, 6}};
  concat.pieces.push_back(Piece{ga, {}, a, box_vars(ga), 0});
  std::vector<IndexExpr> jb = box_vars(gb);
  jb[1] = jb[1] - 3;
  concat.pieces.push_back(Piece{gb, {}, b, jb, 0});
  std::vector<IndexExpr> i = box_vars(full_box({2, 3}));
  Mapping slice = single_piece({2, 3}, w, {i[0], i[1] + 2});
  Result<Mapping> m = compose(slice, w, concat);
  ASSERT_TRUE(m.ok()) << m.reason;
  EXPECT_EQ(to_string(*m), "map [2,3]\n"
                           "  piece 0: [0:2, 0:1] -> a[i0, 2]\n"
                           "  piece 1: [0:2, 1:3] -> b[i0, i1 - 1]\n");
}

TEST(Compose, NonMonotoneIndexEnumeratesRuns) {
  // V[12] = reshape of W[2,6]; W = concat(a[2,3], b[2,3]) on axis 1: i mod 6 crosses 3 twice.
  const Base* a = named_base("a", {2, 3});
  const Base* b = named_base("b", {2, 3});
  const Base* w = named_base("w", {2, 6});
  Mapping concat{{2, 6}, {}};
  Box ga{{0, 2}, {0, 3}}, gb{{0, 2}, {3, 6}};
  concat.pieces.push_back(Piece{ga, {}, a, box_vars(ga), 0});
  std::vector<IndexExpr> jb = box_vars(gb);
  jb[1] = jb[1] - 3;
  concat.pieces.push_back(Piece{gb, {}, b, jb, 0});
  Result<Mapping> m = compose(reshape_mapping({12}, w), w, concat);
  ASSERT_TRUE(m.ok()) << m.reason;
  EXPECT_EQ(m->pieces.size(), 4u);
  EXPECT_EQ(to_string(m->pieces[1]), "[6:9] -> a[1, i0 - 6]");
}

TEST(Compose, MixedVariablesCrossingABoundaryFailWithAReason) {
  const Base* w = named_base("w", {6});
  const Base* a = named_base("a", {3});
  const Base* b = named_base("b", {3});
  Mapping concat{{6}, {}};
  concat.pieces.push_back(Piece{{{0, 3}}, {}, a, {IndexExpr::var(0, 0, 3)}, 0});
  concat.pieces.push_back(Piece{{{3, 6}}, {}, b, {IndexExpr::var(0, 3, 6) - 3}, 0});
  std::vector<IndexExpr> i = box_vars(full_box({2, 3}));
  Mapping outer = single_piece({2, 3}, w, {i[0] + i[1] * 2});
  Result<Mapping> m = compose(outer, w, concat);
  EXPECT_FALSE(m.ok());
  EXPECT_NE(m.reason.find("more than one virtual index"), std::string::npos) << m.reason;
}

TEST(Bounds, OverAGuard) {
  IndexExpr e = IndexExpr::var(0, 100) * 4 + IndexExpr::var(1, 4);
  EXPECT_EQ(bounds(e, {{10, 20}, {0, 4}}), (Interval{40, 79}));
  EXPECT_EQ(bounds(floordiv(e, 8), {{10, 20}, {0, 4}}), (Interval{5, 9}));
}

// Read side of a Split node of x[shape] along `axis` into `sizes`: the mapping of output k.
Mapping split_output(const Shape& shape, int64_t axis, std::vector<int64_t> sizes, size_t k) {
  Builder b(3);
  Value* x = b.input(shape);
  Node* n = b.node("Split", {x, b.ints(i64s(sizes), true)}, int(sizes.size()), {{"axis", axis}});
  return *read_side(*n).mappings[k];
}

TEST(Contiguity, SplitAlongAxis0IsTypeI) {
  Contiguity c = contiguity(split_output({8, 64}, 0, {3, 5}, 1), 4);
  EXPECT_EQ(c.type, Profitability::type1);
  EXPECT_EQ(c.run, 5 * 64);
}

TEST(Contiguity, SplitAlongAxis1IsPartiallyContiguousWithRunTheSplitSize) {
  Contiguity c = contiguity(split_output({8, 96}, 1, {32, 64}, 1), 4, kGpuTransactionBytes);
  EXPECT_EQ(c.run, 64);
  EXPECT_EQ(c.alignment, 32); // rows start at 32 + 96·r
  EXPECT_EQ(c.type, Profitability::partial);
  Contiguity small = contiguity(split_output({8, 10}, 1, {3, 7}, 0), 4, kGpuTransactionBytes);
  EXPECT_EQ(small.run, 3);
  EXPECT_EQ(small.type, Profitability::type2);
}

TEST(Contiguity, GqaExpandOverHeadDim128HasRun128) {
  Builder b(4);
  Value* k = b.input({1, 8, 1, 16, 128});
  Node* n = b.node("Expand", {k, b.ints(i64s({1, 8, 4, 16, 128}), true)}, 1);
  Contiguity c = contiguity(*read_side(*n).mappings[0], 2);
  EXPECT_EQ(c.run, 16 * 128); // a whole [L, D] block of one kv head
  Node* r = b.node("Reshape", {n->output(0), b.ints(i64s({1, 32, 16, 128}), true)}, 1);
  Result<Mapping> m =
      compose(*read_side(*r).mappings[0], value_base(n->output(0)), *read_side(*n).mappings[0]);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(to_string(*m), "map [1,32,16,128]\n  piece 0: [0:1, 0:32, 0:16, 0:128] -> " + k->name +
                               "[0, i1 floordiv 4, 0, i2, i3]\n");
  EXPECT_EQ(contiguity(*m, 2).run, 16 * 128);
  // Over a head dim of 128 alone (one token): run 128, partially contiguous.
  Value* k1 = b.input({1, 8, 1, 1, 128});
  Node* e1 = b.node("Expand", {k1, b.ints(i64s({1, 8, 4, 1, 128}), true)}, 1);
  Contiguity c1 = contiguity(*read_side(*e1).mappings[0], 2);
  EXPECT_EQ(c1.run, 128);
  EXPECT_EQ(c1.type, Profitability::partial);
}

// A scatter's overlay piece holds an element only where its search finds an update row: a run
// may cross only dimensions the search does not read. ScatterElements on axis 0 searches each
// column apart (no run); ScatterND's rows are searched by row, whole rows stay runs.
TEST(Contiguity, SearchedPieceRunsOnlyAlongDimensionsItsSearchIgnores) {
  const Base* upd = named_base("upd", {2, 3});
  const Base* idx = named_base("idx", {2, 3});
  const Base* rows = named_base("rows", {2, 1});
  const Box g{{0, 4}, {0, 3}};
  IndexExpr i0 = IndexExpr::var(0, 4), i1 = IndexExpr::var(1, 3), s = IndexExpr::var(2, 2);
  Piece by_column{g, {Search{2, {{IndexExpr::load(idx, {s, i1}), i0}}}}, upd, {s, i1}, 0};
  EXPECT_EQ(piece_contiguity(by_column).run, 1);
  Piece by_row{
      g, {Search{2, {{IndexExpr::load(rows, {s, IndexExpr::constant(0)}), i0}}}}, upd, {s, i1}, 0};
  EXPECT_EQ(piece_contiguity(by_row).run, 3);
}

TEST(Analysis, InjectiveCoversInverse) {
  const Base* x = named_base("x", {4, 6});
  Mapping t = transpose_read(x, {1, 0});
  EXPECT_EQ(injective(t), Tri::yes);
  Mapping bcast = single_piece({4, 6}, named_base("r", {6}), {box_vars(full_box({4, 6}))[1]});
  EXPECT_EQ(injective(bcast), Tri::no);
  // Two halves of y written by two mappings cover it exactly; one half alone does not.
  const Base* y = named_base("y", {4, 6});
  std::vector<IndexExpr> i = box_vars(full_box({4, 3}));
  Mapping left = single_piece({4, 3}, y, {i[0], i[1]}),
          right = single_piece({4, 3}, y, {i[0], i[1] + 3});
  EXPECT_EQ(covers({&left, &right}, y), Tri::yes);
  EXPECT_EQ(covers({&left}, y), Tri::no);
  EXPECT_EQ(covers({&left, &left}, y), Tri::no);
  // inverse of reshape ∘ transpose, composed back, is the identity.
  const Base* v = named_base("v", {6, 4});
  Result<Mapping> inv = inverse(t, v);
  ASSERT_TRUE(inv.ok()) << inv.reason;
  Result<Mapping> round = compose(*inv, v, t);
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(to_string(*round), "map [4,6]\n  piece 0: [0:4, 0:6] -> x[i0, i1]\n");
  EXPECT_FALSE(inverse(bcast, v).ok());
  Mapping r = reshape_mapping({24}, x);
  Result<Mapping> rinv = inverse(r, named_base("flat", {24}));
  ASSERT_TRUE(rinv.ok());
  EXPECT_EQ(to_string(*rinv), "map [4,6]\n  piece 0: [0:4, 0:6] -> flat[i0*6 + i1]\n");
}

} // namespace
} // namespace vtc::test
