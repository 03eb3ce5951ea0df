// Greedy weighs peak memory: on a C3k2-like block (a Split whose halves reach a Concat around a
// widening bottleneck) taking every profitable move makes the Concat's buffer live from the
// block's first convolution on and raises the peak above that of none. The search holds that
// move back, says so in its result, and keeps the peak at or below none's, with outputs still
// bitwise equal to none's.
#include <fstream>

#include "frontend/onnx_import.h"
#include "model_builder.h"
#include "passes/canonicalize.h"
#include "ref/random_inputs.h"
#include "runtime/lowering.h"
#include "runtime/memory_plan.h"
#include "runtime_test_util.h"
#include "strategy/strategy.h"

namespace vtc {
namespace {

using testing::ModelBuilder;
using testing::RuntimeTest;

Tensor weights(const Shape& s) {
  std::vector<float> v(size_t(shape_numel(s)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 0.0625f * float(int(i % 11) - 5);
  return Tensor::from<float>(s, v);
}

// x [1, 8, 8, 8] -> cv1 (1x1, 8 -> 8) -> Split [4, 4] -> a, b; b -> m1 (4 -> 16) -> Relu ->
// m2 (16 -> 16) -> Relu -> m3 (16 -> 4) = c; Concat(a, b, c) -> cv2 (12 -> 8) -> y. At m2 none
// holds a, b, m1 and m2 (10 KiB); with cv1 writing into the Concat's buffer through the Split
// it holds that buffer (3 KiB) instead of a and b (2 KiB).
ModelBuilder split_bottleneck_concat() {
  ModelBuilder b;
  b.input("x", DType::f32, {1, 8, 8, 8});
  b.initializer("w_cv1", weights({8, 8, 1, 1}));
  b.initializer("w_m1", weights({16, 4, 1, 1}));
  b.initializer("w_m2", weights({16, 16, 1, 1}));
  b.initializer("w_m3", weights({4, 16, 1, 1}));
  b.initializer("w_cv2", weights({8, 12, 1, 1}));
  b.initializer("halves", Tensor::from<int64_t>({2}, {4, 4}));
  b.node("Conv", {"x", "w_cv1"}, {"t"}, "cv1");
  ModelBuilder::set_int(b.node("Split", {"t", "halves"}, {"a", "b"}, "split"), "axis", 1);
  b.node("Conv", {"b", "w_m1"}, {"m1"}, "m1");
  b.node("Relu", {"m1"}, {"r1"}, "r1");
  b.node("Conv", {"r1", "w_m2"}, {"m2"}, "m2");
  b.node("Relu", {"m2"}, {"r2"}, "r2");
  b.node("Conv", {"r2", "w_m3"}, {"c"}, "m3");
  ModelBuilder::set_int(b.node("Concat", {"a", "b", "c"}, {"cat"}, "concat"), "axis", 1);
  b.node("Conv", {"cat", "w_cv2"}, {"y"}, "cv2");
  b.output("y");
  return b;
}

class PeakMemory : public RuntimeTest {
protected:
  std::string write(const ModelBuilder& b, const std::string& name) {
    std::string path = (dir_ / (name + ".onnx")).string();
    std::ofstream(path, std::ios::binary) << b.bytes();
    return path;
  }
};

int64_t peak_of(const Graph& g, const Options& o, bool weigh_memory) {
  KernelPlan plan = plan_kernels(g, o);
  Strategy s = weigh_memory ? choose_for_target(g, plan, o, AnalyticCostModel())
                            : choose_strategy(plan.kg, plan.strategy, AnalyticCostModel());
  return plan_memory(lower_strategy(g, plan.kg, s, o)).peak_bytes;
}

TEST_F(PeakMemory, GreedyHoldsBackMovesThatRaiseThePeak) {
  Graph g = import_onnx_bytes(split_bottleneck_concat().bytes(), ".", "block.onnx");
  canonicalize(g);
  Options o = options();
  o.strategy = StrategyKind::none;
  int64_t none = peak_of(g, o, false);
  o.strategy = StrategyKind::greedy;
  int64_t unweighed = peak_of(g, o, false);
  int64_t weighed = peak_of(g, o, true);
  EXPECT_GT(unweighed, none) << "the block no longer shows the problem the search must avoid";
  EXPECT_LE(weighed, none);

  KernelPlan plan = plan_kernels(g, o);
  Strategy s = choose_for_target(g, plan, o, AnalyticCostModel());
  ASSERT_FALSE(s.held_back.empty());
  for (const HeldBack& h : s.held_back)
    EXPECT_GT(h.peak_after, h.peak_before);
  EXPECT_FALSE(s.commits.empty()) << "moves that do not raise the peak are still taken";
}

TEST_F(PeakMemory, SessionPeakAndOutputsAgainstNone) {
  std::string path = write(split_bottleneck_concat(), "block");
  auto session = [&](const std::string& strategy) {
    Options o = options();
    o.strategy = *parse_strategy_kind(strategy);
    return Session(path, o);
  };
  Session none = session("none");
  HostTensorMap in;
  in.emplace("x", random_tensor(none.inputs().front().type, 7));
  HostTensorMap expected = none.run(in);
  for (const char* strategy : {"type1", "greedy"}) {
    Session s = session(strategy);
    HostTensorMap out = s.run(in);
    EXPECT_TRUE(out.at("y").bitwise_equal(expected.at("y"))) << strategy;
    if (std::string(strategy) == "greedy") {
      EXPECT_LE(s.peak_bytes(), none.peak_bytes());
    }
  }
}

} // namespace
} // namespace vtc
