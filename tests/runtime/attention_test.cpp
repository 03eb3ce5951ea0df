// Attention subgraphs compiled for the cpu target: decode over a grouped-query KV cache (K
// and V reached through Unsqueeze, Expand, Reshape and, for K, a Transpose) with a computed Q,
// scale, softcap and a broadcast mask, and prefill over more keys than one key block with a
// scale by division. Each is one attention kernel whose strategies give the same bits and the
// reference interpreter's values; under greedy the grouped-query copies of the cache are gone.
// A subgraph in another order (mask added before the scale) keeps its unfused kernels.
#include <fstream>

#include "attention_model.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

using testing::AttentionModel;
using testing::RuntimeTest;

// The number of attention kernels among the session's steps, and whether a copy of a cache
// expansion is left.
struct Steps {
  int attention = 0;
  bool expand_copy = false;
};

Steps steps_of(const Session& s) {
  Steps r;
  for (const StepInfo& st : s.program().steps) {
    if (st.kernel && st.kernel->kind == KernelKind::attention) ++r.attention;
    if (st.name.find("copy Expand") != std::string::npos) r.expand_copy = true;
    EXPECT_TRUE(st.fallback.empty()) << st.name << " runs on the interpreter";
  }
  return r;
}

class AttentionTest : public RuntimeTest {
protected:
  void check(const AttentionModel& m, int attention_kernels) {
    const std::string path = (dir_ / "attention.onnx").string();
    std::ofstream(path, std::ios::binary) << testing::attention_model(m).bytes();
    testing::expect_strategies_match_reference(
        path, options(), 1e-5, [&](const std::string& strategy, const Session& s) {
          const Steps st = steps_of(s);
          EXPECT_EQ(st.attention, attention_kernels) << strategy;
          if (strategy == "greedy" && attention_kernels > 0)
            EXPECT_FALSE(st.expand_copy) << "greedy reads the cache through the Expand mapping";
        });
  }
};

TEST_F(AttentionTest, DecodeOverAGroupedQueryCacheIsOneKernel) {
  check(AttentionModel{}, 1);
}

TEST_F(AttentionTest, DecodeWithoutSoftcapIsOneKernel) {
  AttentionModel m;
  m.softcap = false;
  m.kv_len = 300; // more than one decode chunk of keys
  check(m, 1);
}

TEST_F(AttentionTest, PrefillOverSeveralKeyBlocksIsOneKernel) {
  AttentionModel m;
  m.q_len = 5;
  m.kv_len = 70;
  m.softcap = false;
  m.divide = true;
  check(m, 1);
}

TEST_F(AttentionTest, PrefillWithSoftcapAndMoreQueriesThanABlock) {
  AttentionModel m;
  m.q_len = 20;
  m.kv_len = 33;
  m.heads = 2;
  m.kv_heads = 2;
  check(m, 1);
}

TEST_F(AttentionTest, MaskBeforeTheScaleKeepsTheUnfusedKernels) {
  AttentionModel m;
  m.mask_first = true;
  check(m, 0);
}

} // namespace
} // namespace vtc
