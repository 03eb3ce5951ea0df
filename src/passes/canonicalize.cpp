// Identity removal: uses of the output read the input instead. A graph output produced by an
// Identity of a graph input (or of another graph output) keeps its Identity, since graph
// outputs own their own storage.
#include "passes/canonicalize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "passes/sink_elementwise.h"

namespace vtc {

namespace {

bool is_pass_through(const Node& n) {
  if (n.op == "Identity") return true;
  bool mask_used = n.outputs.size() > 1 && n.outputs[1] &&
                   (!n.outputs[1]->users.empty() || n.outputs[1]->is_graph_output);
  return n.op == "Dropout" && !mask_used && n.attr_int("training_mode", 0) == 0 &&
         (!n.input(2) || (n.input(2)->constant && n.input(2)->constant->get_i64(0) == 0));
}

// Inference BatchNormalization with constant parameters: y = x * a + b per channel, with
// a = scale / sqrt(var + eps) and b = bias - mean * a computed once here (in double) and
// shaped [C, 1, ..., 1] so they broadcast along the channel axis.
bool fold_batch_norm(Graph& g, Node* n) {
  if (n->op != "BatchNormalization" || n->attr_int("training_mode", 0) != 0) return false;
  if (n->outputs.size() != 1 || n->inputs.size() != 5) return false;
  for (size_t i = 1; i < 5; ++i)
    if (!n->inputs[i] || !n->inputs[i]->constant) return false;
  Value* x = n->inputs[0];
  Value* y = n->outputs[0];
  if (x->type.rank() < 2 || !is_float(x->type.dtype)) return false;
  int64_t c = x->type.shape[1];
  for (size_t i = 1; i < 5; ++i)
    if (n->inputs[i]->constant->numel() != c) return false;
  double eps = n->attr_float("epsilon", 1e-5f);
  Shape shape(size_t(x->type.rank() - 1), 1);
  shape[0] = c;
  Tensor a(x->type.dtype, shape), b(x->type.dtype, shape);
  const Tensor &scale = *n->inputs[1]->constant, &bias = *n->inputs[2]->constant,
               &mean = *n->inputs[3]->constant, &var = *n->inputs[4]->constant;
  for (int64_t k = 0; k < c; ++k) {
    double ak = scale.get_f64(k) / std::sqrt(var.get_f64(k) + eps);
    a.set_f64(k, ak);
    b.set_f64(k, bias.get_f64(k) - mean.get_f64(k) * ak);
  }
  Value* av = g.add_constant(g.unique_name(n->name + "/scale_folded"), std::move(a));
  Value* bv = g.add_constant(g.unique_name(n->name + "/shift_folded"), std::move(b));
  Value* scaled = g.add_value(g.unique_name(n->name + "/scaled"));
  scaled->type = x->type;
  scaled->has_type = true;
  std::string name = n->name;
  g.remove_node(n);
  g.add_node("Mul", g.unique_name(name + "/mul"), {x, av}, {scaled});
  g.add_node("Add", g.unique_name(name + "/add"), {scaled, bv}, {y});
  return true;
}

// Gemm with transB = 1 and constant weights (how exporters write Linear layers): the weights
// are transposed once here, so kernels stream B row by row. The products and their order
// are unchanged.
bool pretranspose_gemm_weights(Graph& g, Node* n) {
  if (n->op != "Gemm" || n->attr_int("transB", 0) == 0) return false;
  Value* b = n->input(1);
  if (!b || !b->constant || b->type.rank() != 2) return false;
  const Tensor& w = *b->constant;
  int64_t rows = w.shape()[0], cols = w.shape()[1];
  Tensor t(w.dtype(), {cols, rows});
  size_t es = dtype_size(w.dtype());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(t.raw() + size_t(c * rows + r) * es, w.raw() + size_t(r * cols + c) * es, es);
  Value* tv = g.add_constant(g.unique_name(b->name + "/transposed"), std::move(t));
  auto& users = b->users;
  users.erase(std::find(users.begin(), users.end(), n));
  n->inputs[1] = tv;
  tv->users.push_back(n);
  n->attrs["transB"] = int64_t(0);
  return true;
}

} // namespace

int canonicalize(Graph& g) {
  size_t before = g.nodes().size();
  std::vector<Node*> pass_through;
  for (const auto& n : g.nodes())
    if (is_pass_through(*n)) pass_through.push_back(n.get());
  for (Node* n : pass_through) {
    Value* in = n->inputs[0];
    Value* out = n->outputs[0];
    if (out->is_graph_output && (in->is_graph_input || in->is_graph_output || in->constant))
      continue;
    if (out->is_graph_output) {
      // The input takes over the output's name and role: rename is not possible, so keep the
      // output value and make the input's producer write it when it has one.
      if (!in->producer || in->users.size() != 1) continue;
      Node* p = in->producer;
      int k = in->producer_output;
      g.remove_node(n);
      p->outputs[size_t(k)] = out;
      out->producer = p;
      out->producer_output = k;
      in->producer = nullptr;
      continue;
    }
    g.remove_node(n);
    g.replace_uses(out, in);
  }
  std::vector<Node*> batch_norms;
  for (const auto& n : g.nodes())
    if (n->op == "BatchNormalization") batch_norms.push_back(n.get());
  int folded = 0;
  for (Node* n : batch_norms)
    folded += fold_batch_norm(g, n);
  if (folded) g.topological_sort();
  for (const auto& n : g.nodes())
    pretranspose_gemm_weights(g, n.get());
  const int sunk = sink_unary_below_transposes(g);
  g.remove_dead();
  return int(before - g.nodes().size()) + 2 * folded + sunk;
}

} // namespace vtc
