// Graph editing and the printer's stable text form.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/printer.h"
#include "vtc/error.h"

namespace vtc {
namespace {

Value* typed_value(Graph& g, const std::string& name, TensorType t) {
  Value* v = g.add_value(name);
  v->type = std::move(t);
  v->has_type = true;
  return v;
}

TEST(Graph, BuildsUseListsAndPrints) {
  Graph g;
  g.opset = 17;
  Value* x = typed_value(g, "x", {DType::f32, {2, 3}});
  x->is_graph_input = true;
  g.inputs.push_back(x);
  Value* shape = g.add_constant("shape", Tensor::from<int64_t>({2}, {3, 2}));
  Value* y = typed_value(g, "y", {DType::f32, {3, 2}});
  Value* z = typed_value(g, "z", {DType::f32, {2, 3}});
  Node* r = g.add_node("Reshape", "r", {x, shape}, {y});
  Node* t = g.add_node("Transpose", "t", {y}, {z});
  t->attrs["perm"] = std::vector<int64_t>{1, 0};
  z->is_graph_output = true;
  g.outputs.push_back(z);
  EXPECT_EQ(x->users.size(), 1u);
  EXPECT_EQ(y->producer, r);
  EXPECT_EQ(print_graph(g), "graph main (opset 17)\n"
                            "  input  %x: f32[2,3]\n"
                            "  const  %shape: i64[2] = [3,2]\n"
                            "  %y: f32[3,2] = Reshape(%x, %shape)\n"
                            "  %z: f32[2,3] = Transpose(%y) {perm=[1,0]}\n"
                            "  output %z\n");
}

TEST(Graph, RejectsDuplicateNamesAndCycles) {
  Graph g;
  Value* a = g.add_value("a");
  EXPECT_THROW(g.add_value("a"), Error);
  Value* b = g.add_value("b");
  g.add_node("Relu", "n1", {a}, {b});
  g.add_node("Relu", "n2", {b}, {a});
  EXPECT_THROW(g.topological_sort(), Error);
}

TEST(Graph, TopologicalSortAndDeadCode) {
  Graph g;
  Value* x = g.add_value("x");
  x->is_graph_input = true;
  g.inputs.push_back(x);
  Value* a = g.add_value("a");
  Value* b = g.add_value("b");
  Value* dead = g.add_value("dead");
  g.add_node("Relu", "second", {a}, {b});
  g.add_node("Relu", "first", {x}, {a});
  g.add_node("Neg", "unused", {x}, {dead});
  b->is_graph_output = true;
  g.outputs.push_back(b);
  g.topological_sort();
  EXPECT_EQ(g.nodes()[0]->name, "first");
  g.remove_dead();
  EXPECT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.find_value("dead"), nullptr);
}

TEST(Graph, ReplaceUsesMovesGraphOutputs) {
  Graph g;
  Value* x = g.add_value("x");
  Value* y = g.add_value("y");
  Value* z = g.add_value("z");
  g.add_node("Identity", "id", {x}, {y});
  Node* use = g.add_node("Relu", "relu", {y}, {z});
  y->is_graph_output = true;
  g.outputs.push_back(y);
  g.replace_uses(y, x);
  EXPECT_EQ(use->inputs[0], x);
  EXPECT_EQ(g.outputs[0], x);
  EXPECT_TRUE(y->users.empty());
}

} // namespace
} // namespace vtc
