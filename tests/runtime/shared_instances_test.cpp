// The template instances the parts of a cpu unit of three parts or more share
// (cpu_unit_compiler.cpp): they are compiled once into a cache entry of their own, which every
// part declares and links; a chain of convolutions so compiled gives the reference's values,
// and a cache that lost that object builds it again and loads its cached parts with it, to the
// same bits.
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

// x [1, 8, 12, 20] -> 14 convolutions, 1x1 and 3x3 (padding 1) in turn, each adding a channel
// (no two alike) -> y [1, 22, 12, 20]: 14 kernels, three parts.
ModelBuilder conv_chain() {
  ModelBuilder b;
  b.input("x", DType::f32, {1, 8, 12, 20});
  std::string in = "x";
  for (int i = 0; i < 14; ++i) {
    const std::string w = "w" + std::to_string(i), out = i == 13 ? "y" : "h" + std::to_string(i);
    const int64_t k = i % 2 ? 3 : 1;
    b.initializer(w, ramp({9 + i, 8 + i, k, k}, 0.03125f, i));
    auto& conv = b.node("Conv", {in, w}, {out}, "conv" + std::to_string(i));
    if (k == 3) ModelBuilder::set_ints(conv, "pads", {1, 1, 1, 1});
    in = out;
  }
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
  std::ofstream(path, std::ios::binary) << conv_chain().bytes();
  Options ref_options = options();
  ref_options.target = TargetKind::ref;
  Session ref(path, ref_options);
  const HostTensorMap in = testing::random_inputs(ref, 5);
  const HostTensorMap want = ref.run(in);

  Session first(path, options());
  const HostTensorMap got = first.run(in);
  const Comparison c = compare_rel_l2(got.at("y"), want.at("y"), 1e-5);
  EXPECT_TRUE(c.ok) << c.message;
  const fs::path cache = dir_ / "cache";
  auto [defining, declaring] = shared_and_declaring(cache);
  ASSERT_EQ(defining.size(), 1u) << "one object of shared instances";
  EXPECT_EQ(declaring, 3) << "three parts declare them";

  fs::path so = defining[0];
  so.replace_extension(".so");
  ASSERT_TRUE(fs::exists(so));
  fs::remove(so);
  Session again(path, options());
  EXPECT_TRUE(fs::exists(so)) << "the shared instances are built again";
  EXPECT_TRUE(again.run(in).at("y").bitwise_equal(got.at("y")));
}

} // namespace
} // namespace vtc
