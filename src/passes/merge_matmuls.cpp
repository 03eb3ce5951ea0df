// See merge_matmuls.h.
#include "passes/merge_matmuls.h"

#include <cstring>
#include <map>

namespace vtc {

namespace {

// A MatMul of a computed value by constant 2-D weights, its output typed.
bool mergeable(const Node& n) {
  if (n.op != "MatMul" || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  const Value* a = n.inputs[0];
  const Value* w = n.inputs[1];
  const Value* y = n.outputs[0];
  return a && w && y && !a->constant && w->constant && w->type.rank() == 2 && a->has_type &&
         a->type.rank() >= 1 && y->has_type && !y->is_graph_output &&
         a->type.dtype == w->type.dtype;
}

void merge(Graph& g, const std::vector<Node*>& group) {
  Value* a = group[0]->inputs[0];
  const DType dtype = group[0]->inputs[1]->type.dtype;
  const int64_t k = group[0]->inputs[1]->type.shape[0];
  int64_t total = 0;
  std::vector<int64_t> widths;
  for (const Node* n : group) {
    widths.push_back(n->inputs[1]->type.shape[1]);
    total += widths.back();
  }
  Tensor weights(dtype, {k, total});
  const size_t es = dtype_size(dtype);
  int64_t offset = 0;
  for (size_t i = 0; i < group.size(); ++i) {
    const Tensor& w = *group[i]->inputs[1]->constant;
    for (int64_t r = 0; r < k; ++r)
      std::memcpy(weights.raw() + size_t(r * total + offset) * es,
                  w.raw() + size_t(r * widths[i]) * es, size_t(widths[i]) * es);
    offset += widths[i];
  }
  const std::string name = group[0]->name + "/merged";
  Value* w = g.add_constant(g.unique_name(name + "_weights"), std::move(weights));
  Value* product = g.add_value(g.unique_name(name));
  product->type = group[0]->outputs[0]->type;
  product->type.shape.back() = total;
  product->has_type = true;
  Tensor sizes(DType::i64, {int64_t(widths.size())});
  for (size_t i = 0; i < widths.size(); ++i)
    sizes.set_i64(int64_t(i), widths[i]);
  Value* split = g.add_constant(g.unique_name(name + "_split"), std::move(sizes));
  std::vector<Value*> pieces;
  for (Node* n : group) {
    pieces.push_back(n->outputs[0]);
    g.remove_node(n);
  }
  g.add_node("MatMul", g.unique_name(name), {a, w}, {product});
  Node* s = g.add_node("Split", g.unique_name(name + "/split"), {product, split}, pieces);
  s->attrs["axis"] = int64_t(-1);
}

} // namespace

int merge_sibling_matmuls(Graph& g, const std::function<bool(const Node&)>& admit) {
  // Groups by the value multiplied, then by the weights' rows and dtype, in node order.
  std::map<std::pair<const Value*, int64_t>, std::vector<Node*>> groups;
  std::vector<std::pair<const Value*, int64_t>> order;
  for (const auto& n : g.nodes()) {
    if (!mergeable(*n) || (admit && !admit(*n))) continue;
    auto key = std::make_pair(n->inputs[0], n->inputs[1]->type.shape[0]);
    if (groups[key].empty()) order.push_back(key);
    groups[key].push_back(n.get());
  }
  int merged = 0;
  for (const auto& key : order) {
    if (groups[key].size() < 2) continue;
    merge(g, groups[key]);
    ++merged;
  }
  if (merged) {
    g.topological_sort();
    g.remove_dead();
  }
  return merged;
}

} // namespace vtc
