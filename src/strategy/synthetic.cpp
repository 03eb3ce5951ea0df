// The unfused kernel graph and the synthetic block model.
#include "strategy/synthetic.h"

#include <string>

#include "frontend/infer_shapes.h"
#include "ops/op_registry.h"

namespace vtc {
namespace {

KernelKind kind_of(const Node& n) {
  if (n.op == "MatMul" || n.op == "Gemm") return KernelKind::gemm;
  if (n.op == "Conv") return KernelKind::conv;
  if (n.op == "MaxPool" || n.op == "AveragePool" || n.op == "GlobalAveragePool" ||
      n.op == "GlobalMaxPool")
    return KernelKind::pool;
  if (n.op == "Softmax" || n.op == "LogSoftmax") return KernelKind::softmax;
  if (n.op.rfind("Reduce", 0) == 0 || n.op == "ArgMax" || n.op == "ArgMin")
    return KernelKind::reduce;
  if (n.op.find("Normalization") != std::string::npos) return KernelKind::norm;
  const OpDef* def = find_op(n.op);
  return def && def->elementwise ? KernelKind::elementwise : KernelKind::other;
}

Value* ints(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  return g.add_constant(name, Tensor::from<int64_t>({int64_t(v.size())}, v));
}

} // namespace

KernelGraph unfused_kernel_graph(const Graph& g) {
  KernelGraph kg;
  kg.graph = &g;
  for (const auto& node : g.nodes()) {
    Node* n = node.get();
    const OpDef* def = find_op(n->op);
    if (def && def->kind == OpKind::data_movement) {
      kg.steps.push_back({false, int(kg.movement.size())});
      kg.movement.push_back(n);
      continue;
    }
    Kernel k;
    k.name = n->name;
    k.kind = kind_of(*n);
    k.anchor = k.kind == KernelKind::elementwise ? nullptr : n;
    k.nodes = {n};
    for (Value* v : n->inputs)
      if (v) k.inputs.push_back(v);
    for (Value* v : n->outputs)
      if (v) k.outputs.push_back(v);
    kg.steps.push_back({true, int(kg.kernels.size())});
    kg.kernels.push_back(std::move(k));
  }
  return kg;
}

Graph synthetic_graph(int blocks) {
  Graph g;
  g.name = "synthetic";
  g.opset = 17;
  Value* x = g.add_value("x");
  x->type = {DType::f32, {1, 64, 64}};
  x->has_type = true;
  x->is_graph_input = true;
  g.inputs.push_back(x);
  std::vector<float> w(64 * 128);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(int(i % 7) - 3) / 8.0f;
  Value* weight = g.add_constant("W", Tensor::from<float>({64, 128}, w));
  Value* split = ints(g, "split_sizes", {64, 64});
  Value* heads = ints(g, "heads_shape", {1, 64, 4, 16});
  Value* flat = ints(g, "flat_shape", {1, 64, 64});
  Value* start = ints(g, "slice_start", {0});
  Value* end = ints(g, "slice_end", {64});
  Value* axis = ints(g, "slice_axis", {2});
  for (int i = 0; i < blocks; ++i) {
    std::string p = "b" + std::to_string(i) + "/";
    auto v = [&](const std::string& n) { return g.add_value(p + n); };
    Value *h = v("h"), *a = v("a"), *b = v("b"), *r = v("r"), *t = v("t"), *u = v("u"),
          *u2 = v("u2"), *u3 = v("u3"), *a2 = v("a2"), *c = v("c"), *s = v("s"), *y = v("y");
    g.add_node("MatMul", p + "matmul", {x, weight}, {h});
    g.add_node("Split", p + "split", {h, split}, {a, b})->attrs["axis"] = int64_t(2);
    g.add_node("Reshape", p + "reshape", {b, heads}, {r});
    g.add_node("Transpose", p + "transpose", {r}, {t})->attrs["perm"] =
        std::vector<int64_t>{0, 2, 1, 3};
    g.add_node("Sigmoid", p + "sigmoid", {t}, {u});
    g.add_node("Transpose", p + "transpose_back", {u}, {u2})->attrs["perm"] =
        std::vector<int64_t>{0, 2, 1, 3};
    g.add_node("Reshape", p + "reshape_back", {u2, flat}, {u3});
    g.add_node("Relu", p + "relu", {a}, {a2});
    g.add_node("Concat", p + "concat", {a2, u3}, {c})->attrs["axis"] = int64_t(2);
    g.add_node("Slice", p + "slice", {c, start, end, axis}, {s});
    g.add_node("Add", p + "residual", {s, x}, {y});
    x = y;
  }
  x->is_graph_output = true;
  g.outputs.push_back(x);
  infer_shapes(g, 0);
  return g;
}

} // namespace vtc
