// Walks the graph once: infer, fold when every input is constant, then drop what was folded.
#include "frontend/infer_shapes.h"

#include "ops/op_registry.h"
#include "ref/interpreter.h"
#include "vtc/error.h"

namespace vtc {

void infer_shapes(Graph& g, size_t fold_limit_bytes) {
  g.topological_sort();
  std::vector<Node*> folded;
  for (const auto& node : g.nodes()) {
    Node& n = *node;
    const OpDef* def = n.domain.empty() ? find_op(n.op) : nullptr;
    if (!def)
      VTC_UNSUPPORTED() << n.describe() << ": unsupported op "
                        << (n.domain.empty() ? "" : n.domain + ".") << n.op;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      VTC_CHECK(!n.inputs[i] || n.inputs[i]->has_type)
          << n.describe() << ": input '" << n.inputs[i]->name << "' has no known type";
    std::vector<TensorType> types;
    try {
      types = def->infer(InferInputs{n});
    } catch (const NeedsConstantInput& e) {
      Value* v = n.input(size_t(e.input_index));
      throw NeedsConstantInput(e.what(), e.input_index, v ? v->name : "");
    }
    VTC_CHECK(types.size() == n.outputs.size())
        << n.describe() << ": shape inference gave " << types.size() << " outputs for "
        << n.outputs.size();
    bool all_constant = true;
    size_t out_bytes = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (!n.outputs[k]) continue;
      n.outputs[k]->type = types[k];
      n.outputs[k]->has_type = true;
      out_bytes += types[k].nbytes();
    }
    // Shape-kind ops depend only on input types and attributes: always foldable.
    for (Value* v : n.inputs)
      if (v && !v->constant && def->kind != OpKind::shape) all_constant = false;
    if (!all_constant || out_bytes > fold_limit_bytes) continue;
    std::vector<const Tensor*> ins;
    for (Value* v : n.inputs)
      ins.push_back(v && v->constant ? &*v->constant : nullptr);
    std::vector<Tensor> outs = eval_node(n, ins);
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (n.outputs[k]) n.outputs[k]->constant = std::move(outs[k]);
    folded.push_back(&n);
  }
  for (Node* n : folded)
    g.remove_node(n);
  g.remove_dead();
}

} // namespace vtc
