// Identity removal: uses of the output read the input instead. A graph output produced by an
// Identity of a graph input (or of another graph output) keeps its Identity, since graph
// outputs own their own storage.
#include "passes/canonicalize.h"

namespace vtc {

namespace {

bool is_pass_through(const Node& n) {
  if (n.op == "Identity") return true;
  bool mask_used = n.outputs.size() > 1 && n.outputs[1] &&
                   (!n.outputs[1]->users.empty() || n.outputs[1]->is_graph_output);
  return n.op == "Dropout" && !mask_used && n.attr_int("training_mode", 0) == 0 &&
         (!n.input(2) || (n.input(2)->constant && n.input(2)->constant->get_i64(0) == 0));
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
  g.remove_dead();
  return int(before - g.nodes().size());
}

} // namespace vtc
