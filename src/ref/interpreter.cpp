// Reference graph execution: walk nodes in order, keep every value, free nothing.
#include "ref/interpreter.h"

#include "ops/op_registry.h"
#include "vtc/error.h"

namespace vtc {

std::vector<Tensor> eval_node(const Node& n, const std::vector<const Tensor*>& inputs) {
  const OpDef* def = find_op(n.op);
  VTC_CHECK(def && def->eval) << n.describe() << ": op " << n.op << " is not supported";
  std::vector<Tensor> outs = def->eval(n, inputs);
  VTC_CHECK(outs.size() == n.outputs.size())
      << n.describe() << ": reference produced " << outs.size() << " outputs, expected "
      << n.outputs.size();
  for (size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k) {
    Value* v = n.outputs[k];
    if (!v || !v->has_type) continue;
    VTC_CHECK(outs[k].type() == v->type)
        << n.describe() << ": reference output " << k << " is " << type_str(outs[k].type())
        << " but shape inference said " << type_str(v->type);
  }
  return outs;
}

TensorMap run_reference(const Graph& g, const TensorMap& inputs) {
  std::map<const Value*, Tensor> env;
  for (Value* in : g.inputs) {
    auto it = inputs.find(in->name);
    VTC_CHECK(it != inputs.end()) << "missing input '" << in->name << "' (" << type_str(in->type)
                                  << ")";
    VTC_CHECK(it->second.type() == in->type)
        << "input '" << in->name << "' is " << type_str(it->second.type()) << ", model expects "
        << type_str(in->type);
    env[in] = it->second;
  }
  auto lookup = [&](const Value* v) -> const Tensor* {
    if (v->constant) return &*v->constant;
    auto it = env.find(v);
    VTC_CHECK(it != env.end()) << "value '" << v->name << "' used before it is computed";
    return &it->second;
  };
  for (const auto& n : g.nodes()) {
    std::vector<const Tensor*> ins;
    for (Value* v : n->inputs)
      ins.push_back(v ? lookup(v) : nullptr);
    std::vector<Tensor> outs = eval_node(*n, ins);
    for (size_t k = 0; k < n->outputs.size() && k < outs.size(); ++k)
      if (n->outputs[k]) env[n->outputs[k]] = std::move(outs[k]);
  }
  TensorMap result;
  for (Value* out : g.outputs)
    result[out->name] = *lookup(out);
  return result;
}

} // namespace vtc
