// Every cuda kernel template compiles under NVRTC (C++20, -default-device) to a cubin for
// sm_90a, instantiated over dense, transposed, two-piece and computed accessors for f32, f16
// and bf16 (kernel_cases.h): one translation unit per kernel family, as code generation will
// emit them. No GPU is needed. The launch descriptions are checked against the hardware's
// limits on the way.
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "kernel_cases.h"
#include "kernels/cuda/gemm_tc.h"
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

namespace vtc::cuda_test {
namespace {

namespace k = vtc::kernels;

// The tensor-core plans' launches: streamed products (more than two waves, no split-K, tiles of
// at most 64 rows) take resident blocks on every multiprocessor, and their blocks (stages plus
// the park) fit as many to a multiprocessor as the launch bounds promise; the others keep a
// block a tile.
TEST(TcPlan, StreamsProductsOfManyWavesWithBlocksThatFit) {
  struct Shape {
    int64_t batch, m, n, k;
    bool streams;
  };
  const Shape shapes[] = {
      {16, 128, 25600, 128, true},   // C3k2's pointwise convolution at batch 16
      {16, 128, 25600, 1152, false}, // its 3 x 3 as an implicit GEMM: 128-row tiles
      {8, 130, 3000, 72, true},      // 1128 tiles of 64 rows
      {1, 256, 16896, 40, false},    // 1056 tiles: exactly two waves
      {1, 232, 49, 232, false},      // split-K
      {1, 4096, 4096, 4096, false},  // 1024 tiles of 128 rows
      {16, 64, 6400, 64, true},      // a pointwise convolution of 64 channels
  };
  for (const Shape& s : shapes) {
    const k::TcPlan p = k::plan_gemm_tc(s.batch, s.m, s.n, s.k);
    const Launch l = k::gemm_tc_launch(p);
    const int64_t tiles = k::tc_tiles_m(p) * k::tc_tiles_n(p) * p.batch;
    EXPECT_EQ(k::tc_streams(p), s.streams) << s.m << " x " << s.n << " x " << s.k;
    if (!s.streams) {
      EXPECT_EQ(int64_t(l.grid[0]) * l.grid[1], k::tc_tiles_m(p) * k::tc_tiles_n(p));
      continue;
    }
    EXPECT_EQ(p.splits, 1);
    EXPECT_EQ(l.grid[0], l.min_blocks * 132u);
    EXPECT_LT(int64_t(l.grid[0]), tiles);
    // 228 KB of shared memory a multiprocessor, 1 KB of it reserved for each block.
    EXPECT_LE(l.min_blocks * (l.smem_bytes + 1024u), 228u * 1024u) << s.m << " x " << s.n;
  }
}

// Short K: a product short of a block a multiprocessor takes tiles of 32 columns, and splits K
// only below half a wave of blocks; long K keeps 64 columns and splits up to a wave.
TEST(TcPlan, NarrowsTilesBeforeSplittingShortK) {
  const k::TcPlan stage3 = k::plan_gemm_tc(16, 116, 196, 116); // 2 x 7 x 16 tiles of 32
  EXPECT_EQ(stage3.bn, 32);
  EXPECT_EQ(stage3.splits, 1);
  const k::TcPlan stage4 = k::plan_gemm_tc(16, 232, 49, 232); // 4 x 2 x 16: not split
  EXPECT_EQ(stage4.bn, 32);
  EXPECT_EQ(stage4.splits, 1);
  const k::TcPlan one = k::plan_gemm_tc(1, 232, 49, 232); // 8 blocks: split
  EXPECT_EQ(one.bn, 32);
  EXPECT_GT(one.splits, 1);
  const k::TcPlan long_k = k::plan_gemm_tc(1, 64, 4096, 4096); // long K
  EXPECT_EQ(long_k.bn, 64);
  EXPECT_EQ(long_k.splits, 3);                               // 64 blocks: three runs each
  const k::TcPlan wide = k::plan_gemm_tc(16, 64, 25600, 64); // enough blocks
  EXPECT_EQ(wide.bn, 64);
  const k::TcPlan rows16 = k::plan_gemm_tc(1, 16, 400, 144); // 16-row tiles keep 64 columns
  EXPECT_EQ(rows16.bm, 16);
  EXPECT_EQ(rows16.bn, 64);
}

// Streaming blocks keep A (a convolution's weights) where it is the same for every batch, the
// grid holds whole columns of row tiles and the kept rows leave room for the resident blocks;
// the launch then asks for the kept rows' shared memory, still within what the blocks may hold.
TEST(TcPlan, KeepsSharedWeightsWhereTheyFit) {
  struct Shape {
    int64_t batch, m, n, k;
    bool keeps;
  };
  const Shape shapes[] = {
      {16, 128, 25600, 128, true},  // C3k2's cv1 at batch 16
      {16, 128, 25600, 192, true},  // its cv2 (three pieces of 64 channels)
      {16, 128, 25600, 256, false}, // 64 x 264 kept halves would leave room for three blocks
      {8, 24, 16900, 144, true},    // the streamed 3 x 3 kernel case: one tile of 32 rows
      {16, 96, 2304, 72, true},     // the kept-weights conv case: two tiles of 64 rows
      {1, 96, 38400, 72, true},     // the kept-A gemm_tc case
      {1, 232, 49, 232, false},     // not streamed
  };
  for (const Shape& s : shapes) {
    k::TcPlan p = k::plan_gemm_tc(s.batch, s.m, s.n, s.k);
    EXPECT_FALSE(k::tc_keeps_a(p)) << "A per batch: " << s.m << " x " << s.n << " x " << s.k;
    const unsigned fetched = k::gemm_tc_launch(p).smem_bytes;
    p.a_shared = true;
    EXPECT_EQ(k::tc_keeps_a(p), s.keeps) << s.m << " x " << s.n << " x " << s.k;
    const Launch l = k::gemm_tc_launch(p);
    if (!s.keeps) {
      EXPECT_EQ(l.smem_bytes, fetched);
      continue;
    }
    EXPECT_EQ(l.smem_bytes, k::tc_keep_a_smem_bytes(p));
    EXPECT_GE(l.smem_bytes, unsigned(p.bm * (p.k + 8) * 2));
    EXPECT_LE(l.min_blocks * (l.smem_bytes + 1024u), 228u * 1024u) << s.m << " x " << s.n;
  }
}

} // namespace
} // namespace vtc::cuda_test
