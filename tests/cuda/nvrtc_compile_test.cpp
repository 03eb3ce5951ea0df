// Every cuda kernel template compiles under NVRTC (C++20, -default-device) to a cubin for
// sm_90a, instantiated over dense, transposed, two-piece and computed accessors for f32, f16
// and bf16 (kernel_cases.h): one translation unit per kernel family, as code generation will
// emit them. No GPU is needed. The launch descriptions are checked against the hardware's
// limits on the way.
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "kernel_cases.h"
#include "nvrtc_helper.h"

namespace vtc::cuda_test {
namespace {

class CudaKernelsCompile : public ::testing::TestWithParam<size_t> {};

TEST_P(CudaKernelsCompile, NvrtcToCubinForSm90a) {
  static const std::vector<CaseFamily> families = representative_cases();
  const std::vector<Case>& cases = families[GetParam()].cases;
  ASSERT_FALSE(cases.empty());
  for (const Case& c : cases) {
    const Launch& l = c.launch;
    EXPECT_GE(l.grid[0], 1u) << c.name;
    EXPECT_LE(l.grid[1], 65535u) << c.name;
    EXPECT_LE(l.grid[2], 65535u) << c.name;
    EXPECT_EQ(l.block[0] % 32, 0u) << c.name;
    EXPECT_LE(l.block[0] * l.block[1] * l.block[2], 1024u) << c.name;
    EXPECT_LE(l.smem_bytes, 227u * 1024u) << c.name; // an H100 / H200 block's most
  }
  NvrtcOptions options = default_nvrtc_options();
  options.extra.push_back("-Xptxas=-v");
  const std::string name = families[GetParam()].name + ".cu";
  const NvrtcResult r = compile_cubin(translation_unit(cases), name, options);
  ASSERT_TRUE(r.ok) << name << ":\n" << r.log;
  EXPECT_GT(r.cubin.size(), 0u);
  // Spills are no error, but worth seeing: ptxas's "N bytes stack frame, S bytes spill stores".
  int spilling = 0;
  for (size_t at = 0; (at = r.log.find("bytes spill stores", at)) != std::string::npos; ++at) {
    const size_t comma = r.log.rfind(", ", at);
    if (comma != std::string::npos && std::stol(r.log.substr(comma + 2)) > 0) {
      ++spilling;
      const size_t props = r.log.rfind("Function properties for ", at);
      if (props != std::string::npos)
        std::printf("  spills: %s\n",
                    r.log.substr(props + 24, r.log.find('\n', props) - props - 24).c_str());
    }
  }
  std::printf("%s: %zu entry points, %zu-byte cubin, %.1f s%s\n", name.c_str(), cases.size(),
              r.cubin.size(), r.seconds,
              spilling ? (", " + std::to_string(spilling) + " spilling").c_str() : "");
}

std::string family_name(const ::testing::TestParamInfo<size_t>& info) {
  static const std::vector<CaseFamily> families = representative_cases();
  return families[info.param].name;
}

INSTANTIATE_TEST_SUITE_P(Families, CudaKernelsCompile,
                         ::testing::Range(size_t(0), representative_cases().size()), family_name);

} // namespace
} // namespace vtc::cuda_test
