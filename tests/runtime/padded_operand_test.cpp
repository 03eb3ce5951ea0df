// A Pad read whole runs at a time: a MatMul's A padded with a row of ones (EfficientViT's
// linear attention) reads, under every strategy, rows that lie whole in the input or whole in
// the constant border, and rows that cross from one to the other; each strategy must give the
// reference's values and the same bits as the others.
#include <fstream>

#include "model_builder.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

using testing::ModelBuilder;
using testing::RuntimeTest;

// x [2, 4, 40] -> Pad with ones (two columns on the left, one row below) -> [2, 5, 42] ->
// MatMul w [42, 8]: rows of A cross from the border into x, and the last row is all border.
ModelBuilder padded_matmul() {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 4, 40});
  std::vector<float> w(42 * 8);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.125f * float(int(i % 9) - 4);
  b.initializer("w", Tensor::from<float>({42, 8}, w));
  b.initializer("pads", Tensor::from<int64_t>({6}, {0, 0, 2, 0, 1, 0}));
  b.initializer("one", Tensor::from<float>({}, {1.0f}));
  b.node("Pad", {"x", "pads", "one"}, {"p"}, "pad_ones");
  b.node("MatMul", {"p", "w"}, {"y"}, "mm");
  b.output("y");
  return b;
}

TEST_F(RuntimeTest, PaddedOperandGivesTheReferenceValuesUnderEveryStrategy) {
  const std::string path = (dir_ / "padded.onnx").string();
  std::ofstream(path, std::ios::binary) << padded_matmul().bytes();
  testing::expect_strategies_match_reference(path, options(), 1e-6);
}

} // namespace
} // namespace vtc
