// Shape inference and reference semantics of the index-driven data-movement ops (Gather,
// GatherElements, GatherND, ScatterND, ScatterElements, Scatter), and a check that every
// data-movement op moves bytes alike for every dtype. Expected values come from
// onnx.reference / onnxruntime or from hand computation.
#include "movement_test_util.h"

namespace vtc::movement_test {
namespace {

// ---- Gather, GatherElements, GatherND ----

TEST(Gather, AxesNegativeAndScalarIndices) {
  Tensor d = iota({2, 3, 4});
  expect_f32(NodeCase("Gather").in(d).in(ints({2, 2}, {2, -3, 0, 1})).attr("axis", 1L).run1(),
             {2, 2, 2, 4}, {8,  9,  10, 11, 0,  1,  2,  3,  0,  1,  2,  3,  4,  5,  6,  7,
                            20, 21, 22, 23, 12, 13, 14, 15, 12, 13, 14, 15, 16, 17, 18, 19});
  expect_f32(NodeCase("Gather").in(d).in(ints_i32({}, {-1})).attr("axis", -1L).run1(), {2, 3},
             {3, 7, 11, 15, 19, 23});
  expect_f32(NodeCase("Gather").in(iota({10})).in(ints({0, -9, -10})).run1(), {3}, {0, 1, 0});
  EXPECT_EQ(NodeCase("Gather").in(d).in(ints({0}, {})).run1().shape(), (Shape{0, 3, 4}));
}

TEST(Gather, Errors) {
  expect_error(
      [] {
        NodeCase("Gather").in(iota({4})).in(ints({1, 4})).run();
      },
      "index 4 out of range [-4, 3]");
  expect_error([] { NodeCase("Gather").in(iota({4})).in(ints_i32({1}, {-5})).run(); }, "index -5");
  expect_error([] { NodeCase("Gather").in(iota({4})).in(iota({1})).infer(); }, "i32 or i64");
  expect_error([] { NodeCase("Gather").in(iota({4})).in(ints({0})).attr("axis", 1L).infer(); },
               "axis 1");
}

TEST(GatherElements, NegativeIndicesAndSmallerIndices) {
  Tensor d = iota({2, 3, 4});
  Tensor idx = ints({2, 2, 4}, {0, 2, 1, 1, 1, 1, 0, -1, 2, 0, -1, -3, 0, 0, 0, 2});
  expect_f32(NodeCase("GatherElements").in(d).in(idx).attr("axis", 1L).run1(), {2, 2, 4},
             {0, 9, 6, 7, 4, 5, 2, 11, 20, 13, 22, 15, 12, 13, 14, 23});
  Tensor small = ints({1, 1}, {1});
  expect_f32(NodeCase("GatherElements").in(iota({2, 2})).in(small).attr("axis", 0L).run1(), {1, 1},
             {2});
  expect_error(
      [] {
        NodeCase("GatherElements").in(iota({2, 2})).in(ints({1, 1}, {2})).run();
      },
      "index 2 out of range");
  expect_error(
      [] {
        NodeCase("GatherElements").in(iota({2, 2})).in(ints({2}, {0, 1})).infer();
      },
      "rank");
  expect_error(
      [] {
        NodeCase("GatherElements").in(iota({2, 2})).in(ints({1, 3}, {0, 0, 0})).infer();
      },
      "exceed data");
}

TEST(GatherND, TuplesSlabsAndBatchDims) {
  Tensor d = iota({2, 3, 4});
  expect_f32(
      NodeCase("GatherND").in(d).in(ints({2, 1, 2}, {1, 3, 2, 0})).attr("batch_dims", 1L).run1(),
      {2, 1}, {7, 20});
  Tensor slab = NodeCase("GatherND").in(d).in(ints({2, 1}, {1, 0})).run1();
  EXPECT_EQ(slab.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(slab.get_f64(0), 12);
  EXPECT_EQ(slab.get_f64(12), 0);
  Tensor i32 = Tensor::from<int32_t>({2, 2}, {0, 0, 1, 1});
  expect_tensor<int32_t>(
      NodeCase("GatherND").in(Tensor::from<int32_t>({2, 2}, {0, 1, 2, 3})).in(i32).run1(), {2},
      {0, 3});
  expect_f32(NodeCase("GatherND").in(d).in(ints({3}, {-1, -3, -1})).run1(), {}, {15});
}

TEST(GatherND, Errors) {
  expect_error(
      [] {
        NodeCase("GatherND").in(iota({2, 2})).in(ints({1, 3}, {0, 0, 0})).infer();
      },
      "index 3 dims");
  expect_error(
      [] {
        NodeCase("GatherND")
            .in(iota({2, 2}))
            .in(ints({3, 1}, {0, 0, 0}))
            .attr("batch_dims", 1L)
            .infer();
      },
      "batch dim 0");
  expect_error(
      [] {
        NodeCase("GatherND").in(iota({2, 2})).in(ints({1, 2}, {0, 2})).run();
      },
      "index 2 out of range [-2, 1] for axis 1");
}

// ---- ScatterND, ScatterElements, Scatter ----

std::vector<float> scatter_nd(const std::string& reduction) {
  Tensor upd(DType::f32, {3, 4});
  for (int64_t i = 0; i < 12; ++i)
    upd.set_f64(i, 5.0 - double(i));
  Tensor y = NodeCase("ScatterND")
                 .in(iota({3, 4}))
                 .in(ints({3, 1}, {2, 0, 2}))
                 .in(upd)
                 .attr("reduction", reduction)
                 .run1();
  return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());
}

TEST(ScatterND, Reductions) {
  EXPECT_EQ(scatter_nd("none"), (std::vector<float>{1, 0, -1, -2, 4, 5, 6, 7, -3, -4, -5, -6}));
  EXPECT_EQ(scatter_nd("add"), (std::vector<float>{1, 1, 1, 1, 4, 5, 6, 7, 10, 9, 8, 7}));
  EXPECT_EQ(scatter_nd("mul"),
            (std::vector<float>{0, 0, -2, -6, 4, 5, 6, 7, -120, -144, -150, -132}));
  EXPECT_EQ(scatter_nd("max"), (std::vector<float>{1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(scatter_nd("min"), (std::vector<float>{0, 0, -1, -2, 4, 5, 6, 7, -3, -4, -5, -6}));
}

TEST(ScatterND, PointsAndErrors) {
  Tensor upd = Tensor::from<float>({2}, {100, 200});
  expect_f32(NodeCase("ScatterND").in(iota({3, 4})).in(ints({2, 2}, {1, 2, -1, 0})).in(upd).run1(),
             {3, 4}, {0, 1, 2, 3, 4, 5, 100, 7, 200, 9, 10, 11});
  expect_error(
      [&] {
        NodeCase("ScatterND").in(iota({3, 4})).in(ints({2, 2}, {1, 4, 0, 0})).in(upd).run();
      },
      "index 4 out of range");
  expect_error(
      [&] {
        NodeCase("ScatterND").in(iota({3, 4})).in(ints({2, 1}, {1, 0})).in(upd).infer();
      },
      "updates f32[2]");
  expect_error(
      [&] {
        NodeCase("ScatterND")
            .in(iota({3, 4}))
            .in(ints({2, 2}, {1, 2, 0, 0}))
            .in(upd)
            .attr("reduction", std::string("avg"))
            .infer();
      },
      "unsupported reduction 'avg'");
}

std::vector<float> scatter_elements(const std::string& reduction) {
  Tensor y = NodeCase("ScatterElements")
                 .in(iota({3, 4}))
                 .in(ints({2, 2}, {1, -1, 1, 0}))
                 .in(Tensor::from<float>({2, 2}, {10, 20, 30, 40}))
                 .attr("axis", 1L)
                 .attr("reduction", reduction)
                 .run1();
  return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());
}

TEST(ScatterElements, Reductions) {
  EXPECT_EQ(scatter_elements("none"),
            (std::vector<float>{0, 10, 2, 20, 40, 30, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(scatter_elements("add"),
            (std::vector<float>{0, 11, 2, 23, 44, 35, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(scatter_elements("mul"),
            (std::vector<float>{0, 10, 2, 60, 160, 150, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(scatter_elements("max"),
            (std::vector<float>{0, 10, 2, 20, 40, 30, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(scatter_elements("min"), range_f(12));
}

TEST(ScatterElements, DuplicatesOldNameAndErrors) {
  Tensor data = Tensor::from<int64_t>({1, 5}, {1, 2, 3, 4, 5});
  Tensor upd = Tensor::from<int64_t>({1, 2}, {10, 20});
  expect_tensor<int64_t>(NodeCase("ScatterElements")
                             .in(data)
                             .in(ints({1, 2}, {1, 1}))
                             .in(upd)
                             .attr("axis", 1L)
                             .attr("reduction", std::string("add"))
                             .run1(),
                         {1, 5}, {1, 32, 3, 4, 5});
  expect_tensor<int64_t>(
      NodeCase("Scatter").in(data).in(ints_i32({1, 2}, {1, -2})).in(upd).attr("axis", 1L).run1(),
      {1, 5}, {1, 10, 3, 20, 5});
  expect_error(
      [&] {
        NodeCase("ScatterElements")
            .in(data)
            .in(ints({1, 2}, {0, 5}))
            .in(upd)
            .attr("axis", 1L)
            .run();
      },
      "index 5 out of range [-5, 4] for axis 1");
  expect_error(
      [&] {
        NodeCase("ScatterElements").in(data).in(ints({1, 1}, {0})).in(upd).infer();
      },
      "must have the shape of indices");
}

// ---- dtype independence: every op moves bytes, so any dtype gives the f32 result ----

class AnyDType : public ::testing::TestWithParam<DType> {};

Tensor as_dtype(const Tensor& t, DType d) {
  Tensor r(d, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i)
    r.set_f64(i, d == DType::boolean ? double(int64_t(t.get_f64(i)) % 2) : t.get_f64(i));
  return r;
}

TEST_P(AnyDType, MatchesFloatResult) {
  DType dt = GetParam();
  Tensor x = iota({2, 3, 4});
  std::vector<std::function<Tensor(const Tensor&)>> ops = {
      [](const Tensor& t) {
        return NodeCase("Transpose").in(t).attr("perm", I64s{2, 0, 1}).run1();
      },
      [](const Tensor& t) {
        return NodeCase("Slice")
            .in(t)
            .cst(ints({-1, 3}))
            .cst(ints({-10, 0}))
            .cst(ints({1, 2}))
            .cst(ints({-2, -1}))
            .run1();
      },
      [](const Tensor& t) {
        return NodeCase("Pad")
            .in(t)
            .cst(ints({0, 1, 2, 1, 2, 1}))
            .attr("mode", std::string("reflect"))
            .run1();
      },
      [](const Tensor& t) {
        return NodeCase("Gather").in(t).in(ints({1, 0, -1})).attr("axis", 1L).run1();
      },
      [](const Tensor& t) {
        return NodeCase("Tile").in(t).cst(ints({1, 2, 2})).run1();
      },
      [](const Tensor& t) {
        return NodeCase("DepthToSpace").in(t.reshaped({1, 4, 2, 3})).attr("blocksize", 2L).run1();
      },
      [](const Tensor& t) { return NodeCase("Concat").in(t).in(t).attr("axis", 1L).run1(); },
      [](const Tensor& t) {
        return NodeCase("ScatterND")
            .in(t)
            .in(ints({1, 2}, {1, 2}))
            .in(as_dtype(iota({1, 4}), t.dtype()))
            .run1();
      },
  };
  for (size_t k = 0; k < ops.size(); ++k) {
    Tensor want = as_dtype(ops[k](as_dtype(x, DType::f32)), dt);
    Tensor got = ops[k](as_dtype(x, dt));
    EXPECT_TRUE(got.bitwise_equal(want)) << "op " << k << ": " << values_str(got);
  }
}

INSTANTIATE_TEST_SUITE_P(Movement, AnyDType,
                         ::testing::Values(DType::f32, DType::f16, DType::bf16, DType::f64,
                                           DType::i64, DType::i32, DType::i8, DType::u8,
                                           DType::boolean),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

} // namespace
} // namespace vtc::movement_test
