// The paper's workloads (models/generate.py, small): the YOLOv11 C3k2 block loses its Split and
// Concat with everything virtual of the Concat's output (paper §7.6); the Llama decode layer
// keeps no data-movement op between the QKV projection and attention, with the KV cache
// updated in place (paper §3.1); and on every workload, every strategy executes to the
// reference interpreter's outputs bit for bit.
#include <gtest/gtest.h>

#include <set>

#include "strategy/explain.h"
#include "support.h"

namespace vtc::testing {
namespace {

std::set<std::string> base_names(const Strategy& s, const Value* v) {
  std::set<std::string> out;
  if (const Mapping* m = s.operand(v).mapping)
    for (const Piece& p : m->pieces)
      if (p.base) out.insert(p.base->name);
  return out;
}

class Yolo : public ::testing::TestWithParam<const char*> {};

TEST_P(Yolo, C3k2SplitAndConcatBecomeVirtualOfTheConcatOutput) {
  Model m = workload(GetParam());
  Strategy s = choose_strategy(m.kg, {}, AnalyticCostModel());
  ASSERT_EQ(s.vtog->movement.size(), 2u);
  EXPECT_TRUE(s.copies().empty()) << print_strategy(s);
  const Graph& g = *m.graph;
  EXPECT_FALSE(s.is_virtual(g.find_value("c3k2/concat")));
  for (const char* v : {"c3k2/cv1/silu", "c3k2/split_a", "c3k2/split_b", "c3k2/m0/residual"})
    EXPECT_EQ(base_names(s, g.find_value(v)), std::set<std::string>{"c3k2/concat"}) << v;
}

INSTANTIATE_TEST_SUITE_P(Batches, Yolo,
                         ::testing::Values("yolo11_c3k2_small_f32_b1.onnx",
                                           "yolo11_c3k2_small_f32_b16.onnx"));

// Movement nodes on a path from the QKV projection's output to an attention kernel's input.
std::vector<const Node*> between(const KernelGraph& kg, const std::string& from_anchor,
                                 const std::set<std::string>& to_anchors) {
  std::set<const Value*> down, up;
  std::vector<const Value*> work;
  for (const Kernel& k : kg.kernels)
    if (k.anchor && k.anchor->name == from_anchor) work.assign(k.outputs.begin(), k.outputs.end());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (!down.insert(v).second) continue;
    for (const Node* n : kg.movement)
      if (std::find(n->inputs.begin(), n->inputs.end(), v) != n->inputs.end())
        for (const Value* o : n->outputs)
          work.push_back(o);
    for (const Kernel& k : kg.kernels)
      if (!(k.anchor && to_anchors.count(k.anchor->name)) &&
          std::find(k.inputs.begin(), k.inputs.end(), v) != k.inputs.end())
        for (const Value* o : k.outputs)
          work.push_back(o);
  }
  for (const Kernel& k : kg.kernels)
    if (k.anchor && to_anchors.count(k.anchor->name))
      work.insert(work.end(), k.inputs.begin(), k.inputs.end());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (!up.insert(v).second) continue;
    if (v->producer)
      work.insert(work.end(), v->producer->inputs.begin(), v->producer->inputs.end());
  }
  std::vector<const Node*> out;
  for (const Node* n : kg.movement)
    for (const Value* o : n->outputs)
      if (o && down.count(o) && up.count(o)) {
        out.push_back(n);
        break;
      }
  return out;
}

TEST(Llama, NoDataMovementBetweenQkvProjectionAndAttention) {
  Model m = workload("llama3_layer_small_f32_b1.onnx");
  Strategy s =
      choose_strategy(m.kg, {StrategyKind::greedy, {"past_k", "past_v"}}, AnalyticCostModel());
  std::vector<const Node*> path =
      between(m.kg, "attn/qkv_proj", {"attn/qk_matmul", "attn/pv_matmul"});
  EXPECT_GE(path.size(), 20u); // Split, head reshapes, rotary slices, cache update and reads, ...
  std::set<const Node*> left;
  for (const RemainingCopy& c : s.copies())
    left.insert(c.node);
  for (const Node* n : path)
    EXPECT_FALSE(left.count(n)) << n->describe() << " still copies";
  // The caches are updated in place: the new K is written by the rotary kernel straight into
  // past_k, and present_k is past_k.
  const Graph& g = *m.graph;
  EXPECT_EQ(base_names(s, g.find_value("attn/k_rope")), std::set<std::string>{"past_k"});
  EXPECT_EQ(s.aliases().size(), 2u);
  // What stays: the index tensor of the cache update (read through load(), so physical).
  ASSERT_EQ(s.copies().size(), 1u);
  EXPECT_EQ(s.copies()[0].node->name, "attn/cache_index/indices");
}

TEST(Llama, WithoutDonationTheCacheIsCopied) {
  Model m = workload("llama3_layer_small_f32_b1.onnx");
  Strategy s = choose_strategy(m.kg, {}, AnalyticCostModel());
  EXPECT_TRUE(s.aliases().empty());
  int scatters = 0;
  for (const RemainingCopy& c : s.copies())
    scatters += c.node->op == "ScatterND";
  EXPECT_EQ(scatters, 2);
}

// Every strategy runs to the reference's bits on every workload (batch 1; and YOLO at 16).
class Bitwise : public ::testing::TestWithParam<const char*> {};

TEST_P(Bitwise, EveryStrategyMatchesTheReference) {
  std::string file = GetParam();
  Model m = workload(file);
  std::vector<std::string> donated;
  if (file.find("llama") != std::string::npos || file.find("gemma") != std::string::npos)
    donated = {"past_k", "past_v"};
  TensorMap given;
  if (!donated.empty()) given["pos"] = Tensor::from<int64_t>({1}, {21});
  TensorMap inputs = complete_inputs(*m.graph, given);
  TensorMap expected = run_reference(*m.graph, inputs);
  for (StrategyKind k : {StrategyKind::none, StrategyKind::type1, StrategyKind::greedy}) {
    Strategy s = choose_strategy(m.kg, {k, donated}, AnalyticCostModel());
    if (k == StrategyKind::greedy) {
      EXPECT_GT(explain_totals(s).eliminated, 0);
    }
    TensorMap actual = simulate(s, inputs);
    for (auto& [name, t] : expected)
      EXPECT_TRUE(t.bitwise_equal(actual.at(name))) << strategy_kind_name(k) << " " << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, Bitwise,
    ::testing::Values("llama3_layer_small_f32_b1.onnx", "gemma2_local_small_f32_b1.onnx",
                      "gemma2_global_small_f32_b1.onnx", "efficientvit_small_f32_b1.onnx",
                      "yolo11_c3k2_small_f32_b1.onnx", "yolo11_c3k2_small_f32_b16.onnx",
                      "yolo11n_small_f32_b1.onnx", "shufflenet_v2_small_f32_b1.onnx"));

} // namespace
} // namespace vtc::testing
