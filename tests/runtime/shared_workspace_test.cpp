// The one workspace a cuda unit's split-K and split-KV kernels share: no kernel's counters lie
// on bytes another kernel writes partial sums to, every workspace starts aligned inside the
// buffer, the buffer is the largest partial sums plus the largest counters instead of the sum
// of all, a workspace whose partial sums end unaligned gets bytes of its own; and the kernels'
// own layouts put their counters right after the partial sums the code generator is told of.
#include <gtest/gtest.h>
#include <random>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemm_tc.h"
#include "kernels/cuda/gemv.h"
#include "target/shared_workspace.h"

namespace vtc {
namespace {

struct Range {
  int64_t begin, end;
  bool meets(const Range& o) const { return begin < o.end && o.begin < end; }
};

// Every property the executor relies on, for one layout.
void expect_safe(const std::vector<WorkspaceNeed>& needs, const SharedWorkspace& s) {
  ASSERT_EQ(s.offsets.size(), needs.size());
  for (size_t i = 0; i < needs.size(); ++i) {
    if (needs[i].bytes == 0) {
      EXPECT_EQ(s.offsets[i], -1) << i;
      continue;
    }
    EXPECT_GE(s.offsets[i], 0) << i;
    EXPECT_EQ(s.offsets[i] % kWorkspaceAlign, 0) << i;
    EXPECT_LE(s.offsets[i] + needs[i].bytes, s.bytes) << i;
  }
  for (size_t i = 0; i < needs.size(); ++i)
    for (size_t j = 0; j < needs.size(); ++j) {
      if (i == j || needs[i].bytes == 0 || needs[j].bytes == 0) continue;
      const Range counters{s.offsets[i] + needs[i].partial_bytes, s.offsets[i] + needs[i].bytes};
      const Range partial{s.offsets[j], s.offsets[j] + needs[j].partial_bytes};
      EXPECT_FALSE(counters.meets(partial)) << "counters of " << i << " on partial sums of " << j;
    }
}

TEST(SharedWorkspace, LargestPartialSumsPlusLargestCounters) {
  const std::vector<WorkspaceNeed> needs{
      {4096 + 64, 4096}, {0, 0}, {1024 + 400, 1024}, {65536 + 16, 65536}};
  const SharedWorkspace s = share_workspaces(needs);
  expect_safe(needs, s);
  EXPECT_EQ(s.bytes, 65536 + 400);
  EXPECT_EQ(s.offsets[0], 65536 - 4096);
  EXPECT_EQ(s.offsets[2], 65536 - 1024);
  EXPECT_EQ(s.offsets[3], 0);
}

TEST(SharedWorkspace, UnalignedPartialSumsGetTheirOwnBytes) {
  const std::vector<WorkspaceNeed> needs{{1024 + 32, 1024}, {36 + 8, 36}, {2048 + 4, 2048}};
  const SharedWorkspace s = share_workspaces(needs);
  expect_safe(needs, s);
  EXPECT_EQ(s.offsets[1], 2048 + 32); // after the shared part
  EXPECT_EQ(s.bytes, 2048 + 32 + 48); // 44 bytes rounded to 48
}

TEST(SharedWorkspace, NoneNeededIsNoBuffer) {
  EXPECT_EQ(share_workspaces({}).bytes, 0);
  const SharedWorkspace s = share_workspaces({{0, 0}, {0, 0}});
  EXPECT_EQ(s.bytes, 0);
  EXPECT_EQ(s.offsets, (std::vector<int64_t>{-1, -1}));
}

TEST(SharedWorkspace, RandomNeedsAreSafe) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<WorkspaceNeed> needs(1 + rng() % 8);
    for (WorkspaceNeed& n : needs) {
      if (rng() % 5 == 0) continue;
      n.partial_bytes = 4 * int64_t(rng() % 3000);
      n.bytes = n.partial_bytes + 4 * int64_t(1 + rng() % 50);
    }
    expect_safe(needs, share_workspaces(needs));
  }
}

TEST(SharedWorkspace, PartialSumsStatedAreWhereTheKernelsCountersBegin) {
  alignas(16) static unsigned char base[16];
  auto offset = [&](const unsigned* counters) {
    return reinterpret_cast<const unsigned char*>(counters) - base;
  };
  const kernels::GemvShape g = kernels::make_gemv_shape(2, 4, 4096, 4096);
  ASSERT_GT(kernels::gemv_workspace_bytes(g), 0);
  EXPECT_EQ(offset(kernels::gemv_workspace(base, g).counters),
            kernels::gemv_workspace_partial_bytes(g));
  kernels::TcPlan p;
  p.batch = 2, p.m = 784, p.n = 232, p.k = 2048, p.splits = 3;
  ASSERT_GT(kernels::gemm_tc_workspace_bytes(p), kernels::gemm_tc_workspace_partial_bytes(p));
  EXPECT_EQ(offset(kernels::tc_workspace(base, p).counters),
            kernels::gemm_tc_workspace_partial_bytes(p));
  kernels::DecodeAttentionShape a;
  a.batch = 2, a.heads = 8, a.kv_len = 4096, a.d = a.dv = 128, a.group = 4, a.chunk = 256;
  ASSERT_GT(kernels::attention_workspace_bytes(a), 0);
  EXPECT_EQ(offset(kernels::attention_workspace(base, a).counters),
            kernels::attention_workspace_partial_bytes(a));
  const kernels::GemmShape s{16, 16, 17, 1024};
  EXPECT_EQ(kernels::gemm_f32_small_workspace_bytes(s, 64) -
                kernels::gemm_f32_small_workspace_partial_bytes(s, 64),
            s.batch * 4);
}

} // namespace
} // namespace vtc
