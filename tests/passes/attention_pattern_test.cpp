// The attention pattern (attention_pattern.h) and its fusion: what match_attention reads off
// a subgraph (scale, softcap, mask, shapes, the grouped-query group), the kernel fusion makes
// of it when the target asks (golden text), the unfused kernels when it does not or when the
// subgraph is in another order, and two subgraphs sharing a node.
#include <gtest/gtest.h>

#include "attention_model.h"
#include "frontend/onnx_import.h"
#include "passes/fusion.h"

namespace vtc {
namespace {

using testing::AttentionModel;
using testing::ModelBuilder;

Graph import(const ModelBuilder& b) {
  return import_onnx_bytes(b.bytes(), ".", "m.onnx");
}

Node* node_named(Graph& g, const std::string& name) {
  for (const auto& n : g.nodes())
    if (n->name == name) return n.get();
  return nullptr;
}

FuseOptions with_attention() {
  FuseOptions o;
  o.attention = [](const AttentionPattern&) { return true; };
  return o;
}

int attention_kernels(const KernelGraph& kg) {
  int n = 0;
  for (const Kernel& k : kg.kernels)
    n += k.kind == KernelKind::attention;
  return n;
}

TEST(AttentionPattern, ReadsScaleSoftcapMaskAndTheHeadGroup) {
  Graph g = import(testing::attention_model(AttentionModel{}));
  Node* pv = node_named(g, "pv");
  ASSERT_TRUE(pv);
  std::optional<AttentionPattern> p = match_attention(*pv);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scale, 0.25);
  EXPECT_EQ(p->softcap, 5.0);
  ASSERT_TRUE(p->mask);
  EXPECT_EQ(p->mask->name, "mask");
  EXPECT_EQ(p->q->name, "q");
  EXPECT_EQ(p->kt->name, "kt");
  EXPECT_EQ(p->v->name, "v_heads");
  EXPECT_EQ(p->group, 2);
  EXPECT_TRUE(p->decode());
  EXPECT_EQ(p->heads, 4);
  EXPECT_EQ(p->kv_len, 40);
  EXPECT_EQ(p->d, 16);
  EXPECT_EQ(p->chain.size(), 8u); // MatMul, Mul, Div, Tanh, Mul, Add, Softmax, MatMul
  EXPECT_FALSE(match_attention(*node_named(g, "qk")));
}

TEST(AttentionPattern, ScaleByDivisionAndPrefill) {
  AttentionModel m;
  m.divide = true;
  m.softcap = false;
  m.q_len = 3;
  Graph g = import(testing::attention_model(m));
  std::optional<AttentionPattern> p = match_attention(*node_named(g, "pv"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scale, 0.25);
  EXPECT_EQ(p->softcap, 0.0);
  EXPECT_FALSE(p->decode());
  EXPECT_EQ(p->q_len, 3);
}

TEST(AttentionPattern, ReadsThroughRunsOfCastsAfterSoftmax) {
  for (int casts : {1, 2, 3}) {
    AttentionModel m;
    m.casts_after_softmax = casts;
    Graph g = import(testing::attention_model(m));
    std::optional<AttentionPattern> p = match_attention(*node_named(g, "pv"));
    ASSERT_TRUE(p) << casts << " casts";
    EXPECT_EQ(p->chain.size(), 8u + size_t(casts)) << casts << " casts";
    EXPECT_EQ(attention_kernels(fuse(g, with_attention())), 1) << casts << " casts";
  }
}

TEST(AttentionPattern, MaskBeforeTheScaleDoesNotMatch) {
  AttentionModel m;
  m.mask_first = true;
  Graph g = import(testing::attention_model(m));
  EXPECT_FALSE(match_attention(*node_named(g, "pv")));
  EXPECT_EQ(attention_kernels(fuse(g, with_attention())), 0);
}

TEST(AttentionPattern, FusesIntoOneKernelWhenTheTargetAsks) {
  Graph g = import(testing::attention_model(AttentionModel{}));
  const std::string text = print_kernel_graph(fuse(g, with_attention()));
  EXPECT_EQ(text,
            "move   Unsqueeze 'k_unsqueeze' (%k_cache, %axes) -> (%k_u)\n"
            "move   Expand 'k_expand' (%k_u, %expand_shape) -> (%k_e)\n"
            "move   Reshape 'k_reshape' (%k_e, %heads_shape) -> (%k_heads)\n"
            "move   Unsqueeze 'v_unsqueeze' (%v_cache, %axes) -> (%v_u)\n"
            "move   Expand 'v_expand' (%v_u, %expand_shape) -> (%v_e)\n"
            "move   Reshape 'v_reshape' (%v_e, %heads_shape) -> (%v_heads)\n"
            "move   Transpose 'k_transpose' (%k_heads) -> (%kt)\n"
            "kernel k0 attention [Mul 'q_scale', MatMul 'qk', Mul 'scaled', Div 'capped_div', "
            "Tanh 'capped_tanh', Mul 'capped', Add 'masked', Softmax 'softmax', MatMul 'pv'] "
            "(%x, %w, %kt, %scale, %cap, %mask, %v_heads) -> (%y)\n");
  EXPECT_EQ(attention_kernels(fuse(g)), 0) << "no attention kernel unless the target asks";
}

// Attention whose scores are the output of another attention: the first subgraph is fused,
// the second (sharing its MatMul) keeps the unfused kernels.
TEST(AttentionPattern, SubgraphsSharingANodeFuseOnce) {
  ModelBuilder b;
  b.input("q", DType::f32, {1, 2, 3, 4});
  b.input("kt", DType::f32, {1, 2, 4, 5});
  b.input("v", DType::f32, {1, 2, 5, 6});
  b.input("v2", DType::f32, {1, 2, 6, 7});
  b.node("MatMul", {"q", "kt"}, {"s1"}, "qk1");
  ModelBuilder::set_int(b.node("Softmax", {"s1"}, {"p1"}, "softmax1"), "axis", -1);
  b.node("MatMul", {"p1", "v"}, {"s2"}, "pv1");
  ModelBuilder::set_int(b.node("Softmax", {"s2"}, {"p2"}, "softmax2"), "axis", -1);
  b.node("MatMul", {"p2", "v2"}, {"y"}, "pv2");
  b.output("y");
  Graph g = import(b);
  ASSERT_TRUE(match_attention(*node_named(g, "pv1")));
  ASSERT_TRUE(match_attention(*node_named(g, "pv2")));
  const KernelGraph kg = fuse(g, with_attention());
  EXPECT_EQ(attention_kernels(kg), 1);
  EXPECT_EQ(print_kernel_graph(kg),
            "kernel k0 attention [MatMul 'qk1', Softmax 'softmax1', MatMul 'pv1'] (%q, %kt, %v) "
            "-> (%s2)\n"
            "kernel k1 softmax [Softmax 'softmax2'] (%s2) -> (%p2)\n"
            "kernel k2 gemm [MatMul 'pv2'] (%p2, %v2) -> (%y)\n");
}

} // namespace
} // namespace vtc
