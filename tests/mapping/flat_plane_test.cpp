// Tests of plane flattening (src/mapping/flat_plane.h): how operands meet a plane, the flattened
// shape, worked examples of flatten_plane, and a property test: on random chains of
// data-movement ops, the flattened mapping at every index of [.., 1, h*w] lands where the
// value's own mapping does at the unflattened index, and reads the reference's elements.
#include <gtest/gtest.h>

#include "gen_ops.h"
#include "mapping/contiguity.h"
#include "mapping/flat_plane.h"
#include "mapping/layout.h"

namespace vtc::test {
namespace {

constexpr int kChains = 300;

TEST(FlatPlane, PlaneUse) {
  EXPECT_EQ(plane_use({2, 7, 5}, 7, 5), PlaneUse::spans);
  EXPECT_EQ(plane_use({7, 5}, 7, 5), PlaneUse::spans);
  EXPECT_EQ(plane_use({}, 7, 5), PlaneUse::constant);
  EXPECT_EQ(plane_use({1}, 7, 5), PlaneUse::constant);
  EXPECT_EQ(plane_use({3, 1, 1}, 7, 5), PlaneUse::constant);
  EXPECT_EQ(plane_use({5}, 7, 5), PlaneUse::partial);
  EXPECT_EQ(plane_use({3, 7, 1}, 7, 5), PlaneUse::partial);
  EXPECT_EQ(plane_use({3, 1, 5}, 7, 5), PlaneUse::partial);
}

TEST(FlatPlane, Shape) {
  EXPECT_EQ(flat_plane_shape({2, 3, 7, 5}), (Shape{2, 3, 1, 35}));
  EXPECT_EQ(flat_plane_shape({7, 5}), (Shape{1, 35}));
  EXPECT_EQ(flat_plane_shape({4, 1, 9}), (Shape{4, 1, 9}));
}

TEST(FlatPlane, ContiguousPlanesFlattenTransposedOnesDoNot) {
  const Base* x = named_base("x", {4, 6, 10});
  // A slice of whole planes: each plane is one run of x.
  const Base* s = named_base("s", {2, 6, 10});
  std::vector<IndexExpr> i = box_vars(full_box({2, 6, 10}));
  std::optional<Mapping> f =
      flatten_plane(single_piece({2, 6, 10}, x, {i[0] + 1, i[1], i[2]}), s, 4);
  ASSERT_TRUE(f);
  EXPECT_EQ(to_string(*f),
            "map [2,1,60]\n  piece 0: [0:2, 0:1, 0:60] -> x[i0 + 1, i2 floordiv 10, i2 mod 10]\n");
  // Plane rows are runs, but a slice of columns leaves gaps between them.
  const Base* c = named_base("c", {4, 6, 5});
  std::vector<IndexExpr> j = box_vars(full_box({4, 6, 5}));
  EXPECT_FALSE(flatten_plane(single_piece({4, 6, 5}, x, {j[0], j[1], j[2]}), c, 4));
  // A transposed plane has no runs at all.
  EXPECT_FALSE(flatten_plane(transpose_read(x, {0, 2, 1}), named_base("t", {4, 10, 6}), 4));
  // Rank 1 has no plane.
  EXPECT_FALSE(flatten_plane(identity_mapping(named_base("v", {8})), named_base("v", {8}), 4));
}

TEST(FlatPlaneProperty, FlattenedMappingIsTheMappingAtTheUnflattenedIndex) {
  int flattened = 0, kept = 0, unrepresentable = 0;
  for (int k = 0; k < kChains; ++k) {
    Builder b(31000 + uint64_t(k));
    Value* x0 = b.input(random_shape(b, 2, 4, 6));
    std::vector<ChainStep> steps = random_chain(b, x0, false, int(b.uniform(1, 3)));
    ASSERT_FALSE(steps.empty());
    Result<Mapping> m = compose_read_chain(steps);
    if (!m.ok()) {
      ++unrepresentable;
      continue;
    }
    const Value* v = steps.back().node->output(steps.back().out);
    const Shape& shape = v->type.shape;
    if (shape.size() < 2) continue;
    const BaseEnv env = chain_env(b, steps);
    std::optional<Mapping> flat = flatten_plane(*m, value_base(v), 4);
    SCOPED_TRACE("chain " + std::to_string(k) + " " + shape_str(shape) + "\n" + to_string(*m));
    if (!flat) {
      ++kept;
      continue;
    }
    ASSERT_EQ(flat->shape, flat_plane_shape(shape));
    const int64_t w = shape.back();
    auto unflatten = [w](const Shape& i) {
      Shape u = i;
      u[u.size() - 2] = i.back() / w;
      u.back() = i.back() % w;
      return u;
    };
    ASSERT_EQ(check_same_as(*flat, *m, unflatten, env), "") << to_string(*flat);
    ASSERT_EQ(check_read(*flat, b.env.at(v).reshaped(flat->shape), env), "") << to_string(*flat);
    EXPECT_EQ(contiguity(*flat, 4).run % (shape[shape.size() - 2] * w), 0) << to_string(*flat);
    ++flattened;
  }
  std::printf("[ property ] planes: %d flattened, %d kept (not one run), %d chains not one "
              "mapping\n",
              flattened, kept, unrepresentable);
  EXPECT_GE(flattened, kChains / 4);
  EXPECT_GE(kept, kChains / 10);
}

} // namespace
} // namespace vtc::test
