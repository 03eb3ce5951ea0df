// The parts of a cpu unit (cpu_unit_compiler.cpp). The template instances the parts of a unit
// of 13 kernels or more share are compiled once into a cache entry of their own, which every
// part declares and links; a chain of convolutions so compiled gives the reference's values,
// and a cache that lost that object builds it again and loads its cached parts with it, to the
// same bits. Kernels are cached one by one: a longer chain compiles only the kernels the
// shorter one lacks, in parts of their own, and loads the others from the shorter one's parts;
// prebuilt headers and instances are read, not built again; parts are cut per core, balanced.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "model_builder.h"
#include "runtime_test_util.h"
#include "target/cpu_unit_compiler.h"
#include "target/target.h"

namespace vtc {
namespace {

namespace fs = std::filesystem;
using testing::ModelBuilder;
using testing::ramp;
using testing::RuntimeTest;

// x [1, 8, 12, 20] -> `length` convolutions, 1x1 and 3x3 (padding 1) in turn, each adding a
// channel (no two alike) -> y [1, 8 + length, 12, 20]: 14 kernels by default.
ModelBuilder conv_chain(int length = 14) {
  ModelBuilder b;
  b.input("x", DType::f32, {1, 8, 12, 20});
  std::string in = "x";
  for (int i = 0; i < length; ++i) {
    const std::string w = "w" + std::to_string(i);
    const std::string out = i == length - 1 ? "y" : "h" + std::to_string(i);
    const int64_t k = i % 2 ? 3 : 1;
    b.initializer(w, ramp({9 + i, 8 + i, k, k}, 0.03125f, i));
    auto& conv = b.node("Conv", {in, w}, {out}, "conv" + std::to_string(i));
    if (k == 3) ModelBuilder::set_ints(conv, "pads", {1, 1, 1, 1});
    in = out;
  }
  b.output("y");
  return b;
}

// $VTC_PREBUILT_DIR set to `value` while the object lives (the tests that count what a cache
// builds build it all there, with no prebuilt directory).
class ScopedPrebuiltDir {
public:
  explicit ScopedPrebuiltDir(const std::string& value) {
    if (const char* v = std::getenv("VTC_PREBUILT_DIR")) old_ = v;
    setenv("VTC_PREBUILT_DIR", value.c_str(), 1);
  }
  ~ScopedPrebuiltDir() {
    if (old_)
      setenv("VTC_PREBUILT_DIR", old_->c_str(), 1);
    else
      unsetenv("VTC_PREBUILT_DIR");
  }

private:
  std::optional<std::string> old_;
};

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
  const ScopedPrebuiltDir none("");
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
  EXPECT_EQ(declaring, first.compiled_objects()) << "every part declares them";

  fs::path so = defining[0];
  so.replace_extension(".so");
  ASSERT_TRUE(fs::exists(so));
  fs::remove(so);
  Session again(path, options());
  EXPECT_TRUE(fs::exists(so)) << "the shared instances are built again";
  EXPECT_TRUE(again.run(in).at("y").bitwise_equal(got.at("y")));
}

// The part sources in `cache` that declare the shared instances (the parts of a unit of three
// parts or more), with the entry points each defines.
std::map<fs::path, int> parts_and_entries(const fs::path& cache) {
  std::map<fs::path, int> parts;
  for (const auto& e : fs::directory_iterator(cache)) {
    if (e.path().extension() != ".cpp") continue;
    const std::string text = read_text(e.path());
    if (text.find("extern template") == std::string::npos) continue;
    int entries = 0;
    for (size_t at = text.find("extern \"C\""); at != std::string::npos;
         at = text.find("extern \"C\"", at + 1))
      ++entries;
    parts[e.path()] = entries;
  }
  return parts;
}

TEST_F(RuntimeTest, KernelsCompiledForAnotherModelAreLoadedNotCompiledAgain) {
  const ScopedPrebuiltDir none("");
  const std::string shorter = (dir_ / "convs14.onnx").string();
  const std::string longer = (dir_ / "convs16.onnx").string();
  std::ofstream(shorter, std::ios::binary) << conv_chain(14).bytes();
  std::ofstream(longer, std::ios::binary) << conv_chain(16).bytes();
  Session first(shorter, options());
  ASSERT_GT(first.compile_seconds(), 0);
  const std::map<fs::path, int> before = parts_and_entries(dir_ / "cache");
  int compiled_before = 0;
  for (const auto& [part, entries] : before)
    compiled_before += entries;
  EXPECT_EQ(compiled_before, 14) << "each of the 14 kernels compiled once";

  Options ref_options = options();
  ref_options.target = TargetKind::ref;
  Session ref(longer, ref_options);
  const HostTensorMap in = testing::random_inputs(ref, 7);
  Session second(longer, options());
  std::map<fs::path, int> added = parts_and_entries(dir_ / "cache");
  for (const auto& [part, entries] : before)
    added.erase(part);
  ASSERT_FALSE(added.empty());
  int compiled_after = 0;
  for (const auto& [part, entries] : added)
    compiled_after += entries;
  // The two new convolutions, and the last of the shorter chain where writing a graph output
  // makes its kernel another one: compiled in parts of their own, the rest loaded.
  EXPECT_GE(compiled_after, 2);
  EXPECT_LE(compiled_after, 3);
  EXPECT_EQ(second.compiled_objects(), int(before.size() + added.size()))
      << "the shorter chain's parts loaded from the cache beside the new ones";
  const Comparison c = compare_rel_l2(second.run(in).at("y"), ref.run(in).at("y"), 1e-5);
  EXPECT_TRUE(c.ok) << c.message;

  Session again(longer, options());
  EXPECT_EQ(again.compile_seconds(), 0) << "every kernel cached";
  EXPECT_EQ(parts_and_entries(dir_ / "cache").size(), before.size() + added.size());
}

TEST_F(RuntimeTest, PrebuiltHeadersAndInstancesAreReadNotBuiltAgain) {
  const fs::path prebuilt_dir = dir_ / "prebuilt";
  jit::CompileOptions c = target_for(TargetKind::cpu).compile_options(options());
  c.cache_dir = prebuilt_dir.string();
  const PrebuiltCpuObjects first = prebuild_cpu_objects(c);
  EXPECT_EQ(first.built, first.entries);
  EXPECT_GE(first.entries, 2);
  EXPECT_EQ(prebuild_cpu_objects(c).built, 0) << "a second prebuild finds them all";

  const ScopedPrebuiltDir prebuilt(prebuilt_dir.string());
  const std::string path = (dir_ / "convs.onnx").string();
  std::ofstream(path, std::ios::binary) << conv_chain().bytes();
  Options ref_options = options();
  ref_options.target = TargetKind::ref;
  Session ref(path, ref_options);
  const HostTensorMap in = testing::random_inputs(ref, 3);
  Session session(path, options());
  const Comparison cmp = compare_rel_l2(session.run(in).at("y"), ref.run(in).at("y"), 1e-5);
  EXPECT_TRUE(cmp.ok) << cmp.message;

  const fs::path cache = dir_ / "cache";
  auto [defining, declaring] = shared_and_declaring(cache);
  EXPECT_TRUE(defining.empty()) << "the shared instances come from the prebuilt directory";
  EXPECT_EQ(declaring, session.compiled_objects());
  for (const auto& e : fs::directory_iterator(cache)) {
    EXPECT_NE(e.path().extension(), ".gch") << "no header precompiled in the cache";
    if (e.path().extension() == ".cpp")
      EXPECT_NE(read_text(e.path()).find(prebuilt_dir.string()), std::string::npos)
          << e.path() << " includes the prebuilt header";
  }
}

TEST(CpuParts, CutIntoAMultipleOfTheCoresWithBalancedWeights) {
  TranslationUnit unit;
  const size_t n = 61;
  std::vector<size_t> entries;
  for (size_t k = 0; k < n; ++k) {
    unit.entry_weights.push_back(k % 5 == 0 ? 3 : 1);
    entries.push_back(k);
  }
  for (size_t cores : {1u, 2u, 3u, 16u}) {
    const std::vector<std::vector<size_t>> parts = cut_into_parts(unit, entries, cores);
    const size_t rounds = (n + cores * kMaxKernelsPerCpuPart - 1) / (cores * kMaxKernelsPerCpuPart);
    EXPECT_EQ(parts.size(), std::min(n, cores * rounds)) << cores << " cores";
    std::vector<size_t> seen;
    int lightest = 1 << 30, heaviest = 0;
    for (const std::vector<size_t>& p : parts) {
      EXPECT_LE(p.size(), kMaxKernelsPerCpuPart);
      EXPECT_TRUE(std::is_sorted(p.begin(), p.end())) << "a part keeps the unit's order";
      int w = 0;
      for (size_t k : p)
        w += unit.entry_weights[k];
      lightest = std::min(lightest, w);
      heaviest = std::max(heaviest, w);
      seen.insert(seen.end(), p.begin(), p.end());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, entries) << "every entry in exactly one part";
    EXPECT_LE(heaviest - lightest, 3) << cores << " cores: weights balanced within one kernel";
  }
  EXPECT_TRUE(cut_into_parts(unit, {}, 2).empty());
}

} // namespace
} // namespace vtc
