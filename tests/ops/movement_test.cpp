// Shape inference and reference semantics of the view-like and box-cutting data-movement ops
// (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose, DepthToSpace, SpaceToDepth,
// Expand, Tile, Slice, Split, Concat, Pad), one small hand-built node at a time. Expected values
// were computed independently (numpy, onnx.reference and onnxruntime) or by hand; invalid nodes
// must throw vtc::Error naming the node.
#include <limits>

#include "movement_test_util.h"

namespace vtc::movement_test {
namespace {

// ---- Reshape, Flatten, Squeeze, Unsqueeze, Identity ----

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  Tensor y = NodeCase("Reshape").in(iota({2, 3, 4})).cst(ints({0, -1, 2})).run1();
  expect_f32(y, {2, 6, 2}, range_f(24));
  EXPECT_EQ(NodeCase("Reshape").in(iota({2, 3, 4})).cst(ints({2, 0, 1, -1})).infer()[0].shape,
            (Shape{2, 3, 1, 4}));
  EXPECT_EQ(NodeCase("Reshape").in(iota({2, 3, 4})).cst(ints({-1})).infer()[0].shape, (Shape{24}));
}

TEST(Reshape, AllowZeroKeepsLiteralZeros) {
  NodeCase t("Reshape");
  t.in(iota({0, 3, 4})).cst(ints({3, 4, 0})).attr("allowzero", 1L);
  EXPECT_EQ(t.infer()[0].shape, (Shape{3, 4, 0}));
  // Without allowzero the trailing 0 copies input dim 2 (4): 48 != 0 elements.
  expect_error(
      [] {
        NodeCase("Reshape").in(iota({0, 3, 4})).cst(ints({3, 4, 0})).infer();
      },
      "cannot reshape");
}

TEST(Reshape, RejectsBadShapes) {
  expect_error(
      [] {
        NodeCase("Reshape").in(iota({2, 3})).cst(ints({-1, -1})).infer();
      },
      "more than one -1");
  expect_error(
      [] {
        NodeCase("Reshape").in(iota({2, 3})).cst(ints({4, 2})).infer();
      },
      "cannot reshape");
  expect_error(
      [] {
        NodeCase("Reshape").in(iota({2, 3})).cst(ints({-1, 4})).infer();
      },
      "cannot infer");
  expect_error(
      [] {
        NodeCase("Reshape").in(iota({6})).cst(ints({0, 0})).infer();
      },
      "copies dimension 1");
  expect_error(
      [] {
        NodeCase("Reshape").in(iota({6})).cst(ints({-2, -3})).infer();
      },
      "invalid dimension");
}

TEST(Reshape, NonConstantShapeNeedsConstant) {
  EXPECT_THROW(NodeCase("Reshape").in(iota({2, 3})).in(ints({3, 2})).infer(), NeedsConstantInput);
}

TEST(Flatten, AllAxes) {
  auto flat = [](int64_t axis) {
    return NodeCase("Flatten").in(iota({2, 3, 4, 5})).attr("axis", axis).infer()[0].shape;
  };
  EXPECT_EQ(flat(0), (Shape{1, 120}));
  EXPECT_EQ(flat(1), (Shape{2, 60}));
  EXPECT_EQ(flat(4), (Shape{120, 1}));
  EXPECT_EQ(flat(-1), (Shape{24, 5}));
  EXPECT_EQ(flat(-4), (Shape{1, 120}));
  expect_f32(NodeCase("Flatten").in(iota({2, 3})).run1(), {2, 3}, range_f(6));
  expect_error([&] { flat(5); }, "axis 5");
  expect_error([&] { flat(-5); }, "axis -5");
}

TEST(Squeeze, AxesInputAttributeAndDefault) {
  EXPECT_EQ(NodeCase("Squeeze").in(iota({1, 3, 1, 5})).cst(ints({-2})).infer()[0].shape,
            (Shape{1, 3, 5}));
  EXPECT_EQ(NodeCase("Squeeze").in(iota({1, 3, 1, 5})).attr("axes", I64s{0}).infer()[0].shape,
            (Shape{3, 1, 5}));
  expect_f32(NodeCase("Squeeze").in(iota({1, 3, 1, 2})).run1(), {3, 2}, range_f(6));
  expect_error(
      [] {
        NodeCase("Squeeze").in(iota({1, 3})).cst(ints({1})).infer();
      },
      "cannot squeeze axis 1");
  expect_error([] { NodeCase("Squeeze").in(iota({1, 3})).cst(ints({2})).infer(); }, "axis 2");
  expect_error(
      [] {
        NodeCase("Squeeze").in(iota({1, 1})).cst(ints({0, -2})).infer();
      },
      "repeated axis");
}

TEST(Unsqueeze, UnsortedNegativeAndAttributeAxes) {
  EXPECT_EQ(NodeCase("Unsqueeze").in(iota({3, 4, 5})).cst(ints({5, 4, 2})).infer()[0].shape,
            (Shape{3, 4, 1, 5, 1, 1}));
  EXPECT_EQ(NodeCase("Unsqueeze").in(iota({3, 4, 5})).cst(ints({-1, 0})).infer()[0].shape,
            (Shape{1, 3, 4, 5, 1}));
  EXPECT_EQ(NodeCase("Unsqueeze").in(iota({3, 4, 5})).attr("axes", I64s{3}).infer()[0].shape,
            (Shape{3, 4, 5, 1}));
  Tensor scalar = Tensor::from<float>({}, {7.f});
  expect_f32(NodeCase("Unsqueeze").in(scalar).cst(ints({0})).run1(), {1}, {7.f});
  expect_error(
      [] {
        NodeCase("Unsqueeze").in(iota({3})).cst(ints({2, -1})).infer();
      },
      "repeated axis");
  expect_error([] { NodeCase("Unsqueeze").in(iota({3})).cst(ints({2})).infer(); }, "axis 2");
  expect_error([] { NodeCase("Unsqueeze").in(iota({3})).infer(); }, "needs axes");
}

TEST(Identity, CopiesAnyDType) {
  Tensor b = Tensor::from<bool>({3}, {true, false, true});
  EXPECT_TRUE(NodeCase("Identity").in(b).run1().bitwise_equal(b));
}

// ---- Transpose, DepthToSpace, SpaceToDepth ----

TEST(Transpose, PermAndDefaultReverse) {
  expect_f32(
      NodeCase("Transpose").in(iota({2, 3, 4})).attr("perm", I64s{1, 2, 0}).run1(), {3, 4, 2},
      {0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23});
  expect_f32(
      NodeCase("Transpose").in(iota({2, 3, 4})).run1(), {4, 3, 2},
      {0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23});
  expect_error(
      [] {
        NodeCase("Transpose").in(iota({2, 3})).attr("perm", I64s{0, 0}).infer();
      },
      "not a permutation");
  expect_error(
      [] {
        NodeCase("Transpose").in(iota({2, 3})).attr("perm", I64s{0}).infer();
      },
      "does not match rank");
}

TEST(DepthToSpace, DcrAndCrd) {
  expect_f32(NodeCase("DepthToSpace").in(iota({1, 8, 2, 3})).attr("blocksize", 2L).run1(),
             {1, 2, 4, 6}, {0,  12, 1,  13, 2,  14, 24, 36, 25, 37, 26, 38, 3,  15, 4,  16,
                            5,  17, 27, 39, 28, 40, 29, 41, 6,  18, 7,  19, 8,  20, 30, 42,
                            31, 43, 32, 44, 9,  21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47});
  expect_f32(NodeCase("DepthToSpace")
                 .in(iota({1, 8, 2, 3}))
                 .attr("blocksize", 2L)
                 .attr("mode", std::string("CRD"))
                 .run1(),
             {1, 2, 4, 6}, {0,  6,  1,  7,  2,  8,  12, 18, 13, 19, 14, 20, 3,  9,  4,  10,
                            5,  11, 15, 21, 16, 22, 17, 23, 24, 30, 25, 31, 26, 32, 36, 42,
                            37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47});
  expect_error(
      [] {
        NodeCase("DepthToSpace").in(iota({1, 6, 2, 2})).attr("blocksize", 2L).infer();
      },
      "divisible");
  expect_error(
      [] {
        NodeCase("DepthToSpace")
            .in(iota({1, 4, 2, 2}))
            .attr("blocksize", 2L)
            .attr("mode", std::string("XYZ"))
            .infer();
      },
      "unsupported mode 'XYZ'");
}

TEST(SpaceToDepth, ExampleAndInverseOfDepthToSpace) {
  expect_f32(
      NodeCase("SpaceToDepth").in(iota({1, 1, 4, 6})).attr("blocksize", 2L).run1(), {1, 4, 2, 3},
      {0, 2, 4, 12, 14, 16, 1, 3, 5, 13, 15, 17, 6, 8, 10, 18, 20, 22, 7, 9, 11, 19, 21, 23});
  Tensor x = iota({2, 3, 6, 4});
  Tensor d = NodeCase("SpaceToDepth").in(x).attr("blocksize", 2L).run1();
  EXPECT_EQ(d.shape(), (Shape{2, 12, 3, 2}));
  EXPECT_TRUE(NodeCase("DepthToSpace").in(d).attr("blocksize", 2L).run1().bitwise_equal(x));
  expect_error(
      [] {
        NodeCase("SpaceToDepth").in(iota({1, 1, 3, 4})).attr("blocksize", 2L).infer();
      },
      "divisible");
  expect_error(
      [] {
        NodeCase("SpaceToDepth").in(iota({1, 1, 4, 4})).attr("blocksize", 0L).infer();
      },
      "blocksize must be positive");
}

// ---- Expand, Tile ----

TEST(Expand, BidirectionalBroadcast) {
  Tensor x = Tensor::from<float>({3, 1}, {1, 2, 3});
  expect_f32(NodeCase("Expand").in(x).cst(ints({2, 1, 4})).run1(), {2, 3, 4},
             {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  // A 1 in the shape keeps the input's larger dimension.
  expect_f32(NodeCase("Expand").in(x).cst(ints({1})).run1(), {3, 1}, {1, 2, 3});
  expect_error([&] { NodeCase("Expand").in(x).cst(ints({2, 4})).infer(); }, "do not broadcast");
}

TEST(Tile, RepeatsAndZero) {
  Tensor x = ints({2, 2}, {1, 2, 3, 4});
  expect_tensor<int64_t>(NodeCase("Tile").in(x).cst(ints({2, 3})).run1(), {4, 6},
                         {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
  EXPECT_EQ(NodeCase("Tile").in(x).cst(ints({0, 3})).run1().shape(), (Shape{0, 6}));
  expect_error([&] { NodeCase("Tile").in(x).cst(ints({2})).infer(); }, "do not match");
  expect_error([&] { NodeCase("Tile").in(x).cst(ints({2, -1})).infer(); }, "negative repeat");
}

// ---- Slice ----

TEST(Slice, NegativeStepsAndClamping) {
  Tensor x = iota({10});
  expect_f32(
      NodeCase("Slice").in(x).cst(ints({-2})).cst(ints({-9})).cst(ints({0})).cst(ints({-2})).run1(),
      {4}, {8, 6, 4, 2});
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  expect_f32(
      NodeCase("Slice").in(x).cst(ints({-1})).cst(ints({lo})).cst(ints({0})).cst(ints({-1})).run1(),
      {10}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  expect_f32(
      NodeCase("Slice").in(x).cst(ints({lo})).cst(ints({hi})).cst(ints({0})).cst(ints({hi})).run1(),
      {1}, {0});
  Tensor m = iota({3, 5});
  expect_f32(NodeCase("Slice")
                 .in(m)
                 .cst(ints({1, 4}))
                 .cst(ints({1000, 0}))
                 .cst(ints({0, -1}))
                 .cst(ints({1, -2}))
                 .run1(),
             {2, 2}, {9, 7, 14, 12});
}

// Where numpy and onnxruntime disagree, vtc follows the Slice spec's clamping rules: with a
// negative step, start clamps into [0, dim-1] (numpy makes start < -dim empty) and end into
// [-1, dim-1] (onnxruntime reads end = INT64_MAX as "to the front").
TEST(Slice, NegativeStepClampsLikeTheSpec) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  auto slice = [](I64s s, I64s e, I64s st) {
    return NodeCase("Slice")
        .in(iota({5}))
        .cst(ints(s))
        .cst(ints(e))
        .cst(ints({0}))
        .cst(ints(st))
        .run1();
  };
  expect_f32(slice({-6}, {lo}, {-2}), {1}, {0});
  expect_f32(slice({-7}, {0}, {-1}), {0}, {});
  expect_f32(slice({7}, {hi}, {-3}), {0}, {});
  expect_f32(slice({7}, {2}, {-1}), {2}, {4, 3});
}

TEST(Slice, OnnxCaseShapes) {
  auto shape = [](I64s starts, I64s ends, I64s axes, I64s steps) {
    NodeCase c("Slice");
    c.in(iota({20, 10, 5})).cst(ints(starts)).cst(ints(ends));
    if (!axes.empty()) c.cst(ints(axes));
    if (!steps.empty()) c.cst(ints(steps));
    return c.infer()[0].shape;
  };
  EXPECT_EQ(shape({20, 10, 4}, {0, 0, 1}, {0, 1, 2}, {-1, -3, -2}), (Shape{19, 3, 2}));
  EXPECT_EQ(shape({1000}, {1000}, {1}, {1}), (Shape{20, 0, 5}));
  EXPECT_EQ(shape({1}, {1000}, {1}, {1}), (Shape{20, 9, 5}));
  EXPECT_EQ(shape({0, 0, 3}, {20, 10, 4}, {0, -2, -1}, {}), (Shape{20, 10, 1}));
  EXPECT_EQ(shape({0, 0, 3}, {20, 10, 4}, {}, {}), (Shape{20, 10, 1}));
  EXPECT_EQ(shape({5}, {2}, {0}, {1}), (Shape{0, 10, 5}));
  EXPECT_EQ(shape({2}, {5}, {0}, {-1}), (Shape{0, 10, 5}));
}

TEST(Slice, OmittedAxesWithStepsAndEmptyInput) {
  NodeCase c("Slice");
  c.in(iota({4})).cst(ints({3})).cst(ints({0})).skip().cst(ints({-2}));
  expect_f32(c.run1(), {2}, {3, 1});
  Tensor e = NodeCase("Slice")
                 .in(iota({0, 3}))
                 .cst(ints({-1}))
                 .cst(ints({-5}))
                 .cst(ints({0}))
                 .cst(ints({-1}))
                 .run1();
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
}

TEST(Slice, AttributeFormOfOldOpsets) {
  Tensor y = NodeCase("Slice")
                 .in(iota({3, 4}))
                 .attr("starts", I64s{1, -3})
                 .attr("ends", I64s{2, 100})
                 .attr("axes", I64s{0, 1})
                 .run1();
  expect_f32(y, {1, 3}, {5, 6, 7});
  expect_f32(
      NodeCase("Slice").in(iota({3, 2})).attr("starts", I64s{2}).attr("ends", I64s{3}).run1(),
      {1, 2}, {4, 5});
}

TEST(Slice, Errors) {
  expect_error(
      [] {
        NodeCase("Slice")
            .in(iota({4}))
            .cst(ints({0}))
            .cst(ints({4}))
            .cst(ints({0}))
            .cst(ints({0}))
            .infer();
      },
      "step 0");
  expect_error(
      [] {
        NodeCase("Slice")
            .in(iota({4, 4}))
            .cst(ints({0, 0}))
            .cst(ints({1, 1}))
            .cst(ints({1, -1}))
            .infer();
      },
      "repeated axis");
  expect_error(
      [] {
        NodeCase("Slice").in(iota({4})).cst(ints({0, 1})).cst(ints({4})).infer();
      },
      "same length");
  expect_error(
      [] { NodeCase("Slice").in(iota({4})).cst(ints({0})).cst(ints({4})).cst(ints({1})).infer(); },
      "axis 1");
}

// ---- Split, Concat ----

TEST(Split, EqualVariableAndUneven) {
  std::vector<Tensor> eq = NodeCase("Split", 3).in(iota({6})).run();
  expect_f32(eq[0], {2}, {0, 1});
  expect_f32(eq[2], {2}, {4, 5});
  std::vector<Tensor> var =
      NodeCase("Split", 2).in(iota({2, 6})).cst(ints({2, 4})).attr("axis", -1L).run();
  expect_f32(var[0], {2, 2}, {0, 1, 6, 7});
  expect_f32(var[1], {2, 4}, {2, 3, 4, 5, 8, 9, 10, 11});
  std::vector<Tensor> old = NodeCase("Split", 2).in(iota({3})).attr("split", I64s{2, 1}).run();
  expect_f32(old[0], {2}, {0, 1});
  expect_f32(old[1], {1}, {2});
  std::vector<Tensor> uneven =
      NodeCase("Split", 3).in(iota({2, 5})).attr("axis", 1L).attr("num_outputs", 3L).run();
  expect_f32(uneven[0], {2, 2}, {0, 1, 5, 6});
  expect_f32(uneven[1], {2, 2}, {2, 3, 7, 8});
  expect_f32(uneven[2], {2, 1}, {4, 9});
  std::vector<Tensor> zero = NodeCase("Split", 3).in(iota({0})).cst(ints({0, 0, 0})).run();
  for (const Tensor& t : zero)
    EXPECT_EQ(t.shape(), (Shape{0}));
}

TEST(Split, Errors) {
  expect_error(
      [] {
        NodeCase("Split", 2).in(iota({6})).cst(ints({2, 3})).infer();
      },
      "does not sum");
  expect_error(
      [] {
        NodeCase("Split", 2).in(iota({6})).cst(ints({2, 2, 2})).infer();
      },
      "does not match its 2 outputs");
  expect_error([] { NodeCase("Split", 2).in(iota({6})).attr("num_outputs", 3L).infer(); },
               "num_outputs 3");
  expect_error([] { NodeCase("Split", 4).in(iota({5})).infer(); }, "cannot split");
  expect_error([] { NodeCase("Split", 2).in(iota({6})).attr("axis", 1L).infer(); }, "axis 1");
}

TEST(Concat, AxesAndEmptyInputs) {
  Tensor a = iota({2, 2}), b = Tensor::from<float>({2, 1}, {10, 11});
  expect_f32(NodeCase("Concat").in(a).in(b).attr("axis", -1L).run1(), {2, 3}, {0, 1, 10, 2, 3, 11});
  expect_f32(NodeCase("Concat").in(a).in(iota({0, 2})).in(a).attr("axis", 0L).run1(), {4, 2},
             {0, 1, 2, 3, 0, 1, 2, 3});
  expect_error([&] { NodeCase("Concat").in(a).in(b).attr("axis", 0L).infer(); },
               "does not match input 0");
  expect_error(
      [&] {
        NodeCase("Concat").in(a).in(ints({2, 1}, {1, 2})).attr("axis", 1L).infer();
      },
      "does not match input 0");
  expect_error([&] { NodeCase("Concat").in(a).in(a).attr("axis", 2L).infer(); }, "axis 2");
  expect_error([&] { NodeCase("Concat").in(a).infer(); }, "axis");
}

TEST(Concat, InvertsSplit) {
  Tensor x = iota({3, 7, 2});
  std::vector<Tensor> parts =
      NodeCase("Split", 3).in(x).cst(ints({1, 4, 2})).attr("axis", 1L).run();
  EXPECT_TRUE(NodeCase("Concat")
                  .in(parts[0])
                  .in(parts[1])
                  .in(parts[2])
                  .attr("axis", 1L)
                  .run1()
                  .bitwise_equal(x));
}

// ---- Pad ----

Tensor pad_x() {
  return Tensor::from<float>({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
}

Tensor pad(Tensor x, I64s pads, const std::string& mode) {
  return NodeCase("Pad").in(std::move(x)).cst(ints(pads)).attr("mode", mode).run1();
}

TEST(Pad, ReflectEdgeWrap) {
  expect_f32(pad(pad_x(), {0, 2, 0, 0}, "reflect"), {3, 4},
             {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f});
  expect_f32(pad(pad_x(), {0, 2, 0, 0}, "edge"), {3, 4},
             {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f});
  expect_f32(pad(pad_x(), {2, 1, 1, 1}, "wrap"), {6, 4},
             {3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f,
              3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f});
  // Pads wider than the axis keep reflecting (numpy.pad semantics); size 1 repeats.
  Tensor v = Tensor::from<int32_t>({3}, {0, 1, 2});
  expect_tensor<int32_t>(pad(v, {7, 6}, "reflect"), {16},
                         {1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0});
  expect_tensor<int32_t>(pad(Tensor::from<int32_t>({1}, {5}), {2, 1}, "reflect"), {4},
                         {5, 5, 5, 5});
}

TEST(Pad, ConstantValueAxesAndAttributeForm) {
  expect_f32(
      NodeCase("Pad")
          .in(pad_x())
          .cst(ints({1, 2}))
          .cst(Tensor::from<float>({}, {9.5f}))
          .cst(ints({-1}))
          .run1(),
      {3, 5},
      {9.5f, 1.0f, 1.2f, 9.5f, 9.5f, 9.5f, 2.3f, 3.4f, 9.5f, 9.5f, 9.5f, 4.5f, 5.7f, 9.5f, 9.5f});
  NodeCase omitted("Pad");
  omitted.in(iota({2})).cst(ints({1, 1})).skip().skip();
  expect_f32(omitted.run1(), {4}, {0, 0, 1, 0});
  expect_f32(NodeCase("Pad").in(iota({2})).attr("pads", I64s{1, 2}).attr("value", 2.5f).run1(), {5},
             {2.5f, 0, 1, 2.5f, 2.5f});
  expect_f32(NodeCase("Pad")
                 .in(iota({2}))
                 .attr("pads", I64s{0, 1})
                 .attr("mode", std::string("edge"))
                 .run1(),
             {3}, {0, 1, 1});
}

TEST(Pad, NegativePadsCrop) {
  expect_f32(pad(iota({2, 4}), {0, -1, 0, -2}, "constant"), {2, 1}, {1, 5});
  // Cropping first, then padding the kept part: [1 2 3] reflected by 2 on the left.
  expect_f32(pad(iota({5}), {2, -1}, "reflect"), {6}, {2, 1, 0, 1, 2, 3});
  expect_f32(pad(iota({5}), {-1, 2}, "edge"), {6}, {1, 2, 3, 4, 4, 4});
}

TEST(Pad, Errors) {
  expect_error([] { pad(iota({0, 2}), {1, 0, 0, 0}, "reflect"); }, "cannot pad the empty axis 0");
  expect_error([] { pad(iota({2}), {1, 1}, "mirror"); }, "unsupported mode 'mirror'");
  expect_error([] { pad(iota({2}), {1, 1, 1, 1}, "constant"); }, "need 2 values");
  expect_error([] { pad(iota({2}), {-2, -1}, "constant"); }, "crop more than");
  expect_error(
      [] {
        NodeCase("Pad").in(iota({2})).cst(ints({1, 1})).cst(ints({}, {3})).infer();
      },
      "constant_value");
  EXPECT_EQ(pad(iota({0, 2}), {1, 0, 1, 0}, "constant").shape(), (Shape{2, 2}));
}

} // namespace
} // namespace vtc::movement_test
