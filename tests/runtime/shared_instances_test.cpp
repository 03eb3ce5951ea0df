// The template instances a cpu unit's parts share (cpu_unit_compiler.cpp): they are compiled
// once into a cache entry of their own, which every part declares and links; a model of
// convolutions so compiled gives the reference's values, and a cache that lost that object
// builds it again and loads its cached parts with it, to the same bits.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model_builder.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

namespace fs = std::filesystem;
using testing::ModelBuilder;
using testing::ramp;
using testing::RuntimeTest;

// x [1, 16, 12, 20] -> 1x1 conv (16 -> 24) -> 3x3 conv (24 -> 24, padding 1) -> y.
ModelBuilder two_convs() {
  ModelBuilder b;
  b.input("x", DType::f32, {1, 16, 12, 20});
  b.initializer("w1", ramp({24, 16, 1, 1}, 0.0625f, 1));
  b.initializer("w2", ramp({24, 24, 3, 3}, 0.0625f, 2));
  b.node("Conv", {"x", "w1"}, {"h"}, "pointwise");
  ModelBuilder::set_ints(b.node("Conv", {"h", "w2"}, {"y"}, "conv3"), "pads", {1, 1, 1, 1});
  b.output("y");
  return b;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The cache entries (their sources) that define the shared instances, and those that declare
// them.
std::pair<std::vector<fs::path>, int> shared_and_declaring(const fs::path& cache) {
  std::vector<fs::path> defining;
  int declaring = 0;
  for (const auto& e : fs::directory_iterator(cache)) {
    if (e.path().extension() != ".cpp") continue;
    const std::string text = read_text(e.path());
    if (text.find("extern template") != std::string::npos)
      ++declaring;
    else if (text.find("template void vtc::kernels::gemm_engine") != std::string::npos)
      defining.push_back(e.path());
  }
  return {defining, declaring};
}

TEST_F(RuntimeTest, PartsLinkTheSharedInstancesBuiltOnceAndRebuiltWhenMissing) {
  const std::string path = (dir_ / "convs.onnx").string();
  std::ofstream(path, std::ios::binary) << two_convs().bytes();
  testing::expect_strategies_match_reference(path, options(), 1e-5);
  const fs::path cache = dir_ / "cache";
  auto [defining, declaring] = shared_and_declaring(cache);
  ASSERT_EQ(defining.size(), 1u) << "one object of shared instances for every strategy";
  EXPECT_GE(declaring, 1);

  Session first(path, options());
  const HostTensorMap in = testing::random_inputs(first, 5);
  const HostTensorMap want = first.run(in);
  fs::path so = defining[0];
  so.replace_extension(".so");
  ASSERT_TRUE(fs::exists(so));
  fs::remove(so);
  Session again(path, options());
  EXPECT_TRUE(fs::exists(so)) << "the shared instances are built again";
  const HostTensorMap got = again.run(in);
  EXPECT_TRUE(got.at("y").bitwise_equal(want.at("y")));
}

} // namespace
} // namespace vtc
