// The cpu target's copies of transposes: retinanet's heads move [1, A*K, H, W] to
// [1, H*W*A, K] through Reshape, Transpose (0, 3, 4, 1, 2) and Reshape, with rows of K = 10
// (classes) or 4 (box coordinates). Left physical, the Transpose's copy runs over its index
// space coalesced to [H*W, A*K] and through copy_transposed's tiles (the input runs along
// H*W), not row by row over rows of K; every strategy gives the same bits and the reference
// interpreter's values.
#include <fstream>

#include "model_builder.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

using testing::ModelBuilder;
using testing::RuntimeTest;

// One head: x [1, 3*k, h, w] -> Relu -> Reshape [1, 3, k, h, w] -> Transpose (0, 3, 4, 1, 2)
// -> Reshape [1, h*w*3, k] -> output `name`.
void head(ModelBuilder& b, const std::string& name, int64_t k, int64_t h, int64_t w) {
  b.input(name + "_x", DType::f32, {1, 3 * k, h, w});
  b.initializer(name + "_split", Tensor::from<int64_t>({5}, {1, 3, k, h, w}));
  b.initializer(name + "_rows", Tensor::from<int64_t>({3}, {1, h * w * 3, k}));
  b.node("Relu", {name + "_x"}, {name + "_act"}, name + "_relu");
  b.node("Reshape", {name + "_act", name + "_split"}, {name + "_5d"}, name + "_reshape");
  ModelBuilder::set_ints(b.node("Transpose", {name + "_5d"}, {name + "_t"}, name + "_transpose"),
                         "perm", {0, 3, 4, 1, 2});
  b.node("Reshape", {name + "_t", name + "_rows"}, {name}, name + "_flatten");
  b.output(name);
}

TEST_F(RuntimeTest, TransposedHeadsCopyThroughTilesOverCoalescedDimensions) {
  ModelBuilder b;
  head(b, "cls", 10, 16, 16);
  head(b, "box", 4, 8, 8);
  const std::string path = (dir_ / "heads.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  testing::expect_strategies_match_reference(
      path, options(), 1e-7, [](const std::string& strategy, const Session& s) {
        if (strategy != "none") return; // the others may leave the transposes virtual
        const std::string& src = s.translation_unit().source;
        EXPECT_NE(src.find("copy_transposed<0>("), std::string::npos) << src;
        EXPECT_NE(src.find("Index<2>{256, 30}"), std::string::npos) << "cls not coalesced";
        EXPECT_NE(src.find("Index<2>{64, 12}"), std::string::npos) << "box not coalesced";
        EXPECT_EQ(src.find("Index<5>{1, 16, 16, 3, 10}"), std::string::npos)
            << "a copy walks rows of 10";
      });
}

} // namespace
} // namespace vtc
