// The vtc IR: a Graph of Nodes (ONNX-style ops with attributes) connected by Values that
// carry a static TensorType. Constants (initializers, folded shape arithmetic) are Values
// with a `constant` tensor and no producer. Nodes are kept in topological order.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vtc/tensor.h"

namespace vtc {

class Node;

struct Value {
  std::string name;
  TensorType type;
  bool has_type = false; // set once shape inference has run for this value
  Node* producer = nullptr;
  int producer_output = 0;
  std::vector<Node*> users; // one entry per use (a node using it twice appears twice)
  std::optional<Tensor> constant;
  bool is_graph_input = false;
  bool is_graph_output = false;

  bool is_constant() const { return constant.has_value(); }
};

using Attribute = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor>;

class Node {
public:
  std::string name;            // may be empty in the source model; the importer names every node
  std::string op;              // ONNX op_type, e.g. "Reshape"
  std::string domain;          // "" for the default ONNX domain
  std::vector<Value*> inputs;  // nullptr for an omitted optional input
  std::vector<Value*> outputs; // nullptr for an omitted optional output
  std::map<std::string, Attribute> attrs;

  size_t num_inputs() const { return inputs.size(); }
  // Input i, or nullptr when absent or omitted.
  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }

  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  int64_t attr_int(const std::string& key) const; // throws when missing
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key,
                                 const std::vector<int64_t>& fallback = {}) const;
  std::vector<float> attr_floats(const std::string& key) const;
  const Tensor& attr_tensor(const std::string& key) const;

  // "Reshape 'name'" for error messages.
  std::string describe() const;
};

class Graph {
public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  std::string name;
  int64_t opset = 0;
  std::vector<Value*> inputs;  // graph inputs that are not constants, in model order
  std::vector<Value*> outputs; // graph outputs, in model order

  // Creates a value; names must be unique (throws otherwise).
  Value* add_value(const std::string& name);
  Value* add_constant(const std::string& name, Tensor t);
  // Creates a node at the end of the node list and links producers and users.
  Node* add_node(const std::string& op, const std::string& name, std::vector<Value*> inputs,
                 std::vector<Value*> outputs);
  // Unlinks and deletes a node; its outputs stay (with no producer).
  void remove_node(Node* n);
  // Replaces every use of `from` by `to` (graph outputs included).
  void replace_uses(Value* from, Value* to);
  // Deletes values with no producer, no users that are neither inputs, outputs nor constants
  // in use, and nodes none of whose outputs are used (dead code elimination).
  void remove_dead();

  Value* find_value(const std::string& name) const;
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  // Sorts nodes topologically (stable for already-sorted graphs); throws on a cycle.
  void topological_sort();

  // Unique name with the given prefix ("prefix", "prefix_1", ...).
  std::string unique_name(const std::string& prefix) const;

private:
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::map<std::string, Value*> by_name_;
};

} // namespace vtc
