// The Reduce* kernels' rows on the cpu target: a mean over the trailing (spatial) axes of a
// dense tensor, as dynamo exports global average pooling, reads each row as one run of h * w
// values in memory (the view says so, and the kernel reduces it where it lies, as
// GlobalAveragePool's planes), while a mean over a transposed view is staged as before; every
// strategy gives the same bits and the reference interpreter's values.
#include <fstream>

#include "model_builder.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

using testing::ModelBuilder;
using testing::RuntimeTest;

// x [1, 6, 5, 7] -> ReduceMean over (2, 3) -> mean [1, 6, 1, 1], and x -> Transpose
// (0, 1, 3, 2) -> ReduceMean over (2, 3) -> tmean [1, 6, 1, 1].
ModelBuilder spatial_means() {
  ModelBuilder b;
  b.input("x", DType::f32, {1, 6, 5, 7});
  ModelBuilder::set_ints(b.node("ReduceMean", {"x"}, {"mean"}, "mean"), "axes", {2, 3});
  ModelBuilder::set_ints(b.node("Transpose", {"x"}, {"t"}, "transpose"), "perm", {0, 1, 3, 2});
  ModelBuilder::set_ints(b.node("ReduceMean", {"t"}, {"tmean"}, "tmean"), "axes", {2, 3});
  b.output("mean");
  b.output("tmean");
  return b;
}

TEST_F(RuntimeTest, MeanOverDenseTrailingAxesReadsRowsOfTheWholePlane) {
  const std::string path = (dir_ / "means.onnx").string();
  std::ofstream(path, std::ios::binary) << spatial_means().bytes();
  testing::expect_strategies_match_reference(
      path, options(), 1e-6, [](const std::string& strategy, const Session& s) {
        int reduce_steps = 0;
        for (const StepInfo& st : s.program().steps) {
          reduce_steps += st.name.find("ReduceMean") != std::string::npos;
          EXPECT_TRUE(st.fallback.empty()) << st.name << " runs on the interpreter";
        }
        EXPECT_EQ(reduce_steps, 2) << strategy;
        // The rows of the dense input x: runs of 5 * 7 values, not of one image row (7).
        EXPECT_NE(s.translation_unit().source.find("static constexpr int64_t contig = 35;"),
                  std::string::npos)
            << strategy << ": the mean's rows are not one run";
      });
}

} // namespace
} // namespace vtc
