// Unary elementwise nodes moved below a Transpose: which nodes qualify, and the rewrite.
#include "passes/sink_elementwise.h"

#include "ops/op_registry.h"

namespace vtc {
namespace {

// An elementwise node of one tensor operand (its other inputs scalar constants: Clip's bounds)
// whose output has that operand's shape.
bool unary_elementwise(const Node& n) {
  const OpDef* d = find_op(n.op);
  if (!d || !d->elementwise || n.outputs.size() != 1 || !n.outputs[0]) return false;
  if (n.inputs.empty() || !n.inputs[0] || n.inputs[0]->is_constant()) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] && (!n.inputs[i]->is_constant() || n.inputs[i]->constant->numel() != 1))
      return false;
  return n.outputs[0]->type.shape == n.inputs[0]->type.shape;
}

// The one user of v, or null (several users, or v is a graph output).
Node* only_user(const Value* v) {
  if (v->is_graph_output || v->users.size() != 1) return nullptr;
  return v->users[0];
}

// Whether v goes, through unary elementwise nodes of one use each, to a matrix product.
bool feeds_matrix_product(const Value* v) {
  for (Node* u = only_user(v); u; u = only_user(u->outputs[0])) {
    if (u->op == "MatMul" || u->op == "Gemm") return true;
    if (!unary_elementwise(*u)) return false;
  }
  return false;
}

// The unary node producing the input of Transpose t, when it may move below t.
Node* movable_producer(const Node& t) {
  if (t.op != "Transpose" || t.inputs.size() != 1 || t.outputs.size() != 1) return nullptr;
  const Value* in = t.inputs[0];
  if (!in || !in->producer || only_user(in) != &t) return nullptr;
  Node* e = in->producer;
  if (!unary_elementwise(*e) || !feeds_matrix_product(t.outputs[0])) return nullptr;
  return e;
}

// e -> t becomes t' -> e': t' transposes e's operand, e' writes t's output.
void swap(Graph& g, Node* e, Node* t) {
  Value* x = e->inputs[0];
  Value* y = t->outputs[0];
  Value* moved = g.add_value(g.unique_name(x->name + "/transposed"));
  moved->type = TensorType{x->type.dtype, y->type.shape};
  moved->has_type = true;
  std::vector<Value*> e_inputs = e->inputs;
  e_inputs[0] = moved;
  const std::string e_op = e->op, e_name = e->name, t_name = t->name;
  const auto e_attrs = e->attrs, t_attrs = t->attrs;
  g.remove_node(t);
  g.remove_node(e);
  g.add_node("Transpose", t_name, {x}, {moved})->attrs = t_attrs;
  g.add_node(e_op, e_name, e_inputs, {y})->attrs = e_attrs;
}

} // namespace

int sink_unary_below_transposes(Graph& g) {
  int moved = 0;
  for (bool again = true; again;) {
    again = false;
    for (const auto& n : g.nodes()) {
      Node* e = movable_producer(*n);
      if (!e) continue;
      swap(g, e, n.get());
      ++moved;
      again = true;
      break; // the node list changed
    }
  }
  if (moved) {
    g.topological_sort();
    g.remove_dead();
  }
  return moved;
}

} // namespace vtc
