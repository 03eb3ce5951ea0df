// HostBuffers, the Executor's memory for intermediates: the arena layout follows the memory
// plan; the separate layout (the sanitizers') gives each buffer a block of its own with every
// byte zeroed, and empty buffers a common non-null address. Asking for sanitized code in a
// process without the ASan runtime is a named error, not a process ended inside dlopen.
#include <algorithm>

#include "jit/sanitizer.h"
#include "runtime/host_buffers.h"
#include "runtime_test_util.h"

namespace vtc::testing {
namespace {

// Three intermediates in a chain: c0 (steps 0-1), c1 (1-2), c2 (2-3): c0 and c2 can share.
struct Chain {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  Program program;
  Chain() {
    TensorType f{DType::f32, {3, 5}}; // 60 bytes: not a multiple of the arena alignment
    Value* x = graph_input(*graph, "x", f);
    Program& p = program;
    p.inputs = {add_buffer(p, x, BufferRole::input)};
    for (const char* name : {"c0", "c1", "c2"})
      add_buffer(p, typed(graph->add_value(name), f), BufferRole::intermediate);
    add_buffer(p, typed(graph->add_value("nothing"), {DType::f32, {0}}), BufferRole::intermediate);
    p.steps.push_back(step_of("s0", {0}, {1}, 0, 0));
    p.steps.push_back(step_of("s1", {1}, {2}, 0, 0));
    p.steps.push_back(step_of("s2", {2}, {3}, 0, 0));
    p.steps.push_back(step_of("s3", {3}, {}, 0, 0));
  }
};

TEST(HostBuffers, ArenaLayoutFollowsThePlan) {
  Chain c;
  MemoryPlan plan = plan_memory(c.program);
  HostBuffers b(c.program, plan, false);
  EXPECT_FALSE(b.separate());
  auto* base = static_cast<std::byte*>(b.intermediate(1)) - plan.offsets[1];
  for (int id : {1, 2, 3})
    EXPECT_EQ(b.intermediate(id), base + plan.offsets[size_t(id)]) << id;
  EXPECT_EQ(b.intermediate(1), b.intermediate(3)); // c0 and c2 share their bytes
  EXPECT_EQ(b.intermediate(4), b.empty());
  EXPECT_NE(b.empty(), nullptr);
}

TEST(HostBuffers, SeparateLayoutGivesEachBufferItsOwnZeroedBlock) {
  Chain c;
  MemoryPlan plan = plan_memory(c.program);
  HostBuffers b(c.program, plan, true);
  EXPECT_TRUE(b.separate());
  std::vector<std::byte*> blocks;
  for (int id : {1, 2, 3}) {
    auto* p = static_cast<std::byte*>(b.intermediate(id));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % uintptr_t(kArenaAlignment), 0u) << id;
    EXPECT_TRUE(std::all_of(p, p + 60, [](std::byte v) { return v == std::byte{0}; })) << id;
    blocks.push_back(p);
  }
  std::sort(blocks.begin(), blocks.end());
  for (size_t k = 1; k < blocks.size(); ++k)
    EXPECT_GE(blocks[k] - blocks[k - 1], 60) << "blocks overlap";
  EXPECT_EQ(b.intermediate(4), b.empty());
  EXPECT_NE(b.empty(), nullptr);
}

TEST_F(RuntimeTest, SanitizedCodeWithoutTheAsanRuntimeIsANamedError) {
  if (jit::asan_runtime_loaded()) GTEST_SKIP() << "the ASan runtime is loaded";
  AddReluMul m;
  Options o = options();
  o.sanitize = true;
  try {
    Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), o);
    FAIL() << "expected vtc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("LD_PRELOAD"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("VTC_SANITIZE=ON"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace vtc::testing
