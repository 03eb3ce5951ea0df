// vtc's own op definitions: for each supported ONNX op, its kind, its shape inference and its
// reference semantics (the oracle every compiled target is checked against). One table, one
// entry per op; families of ops register themselves from their own files (ops_*.cpp).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "vtc/error.h"

namespace vtc {

enum class OpKind {
  data_movement, // only moves elements: Reshape, Transpose, Split, Concat, ScatterND, ...
  compute,       // does arithmetic: MatMul, Conv, Add, Softmax, ...
  shape,         // produces values from shapes or attributes only: Shape, Constant, Range, ...
};

// Thrown by shape inference when it needs the value of an input that is not a constant
// (Reshape's shape, Slice's starts, ...). Callers may freeze that input and retry.
struct NeedsConstantInput : Error {
  NeedsConstantInput(const std::string& what, int input_index, std::string value_name = "")
      : Error(what), input_index(input_index), value_name(std::move(value_name)) {}
  int input_index;
  std::string value_name; // the non-constant value, filled in by shape inference
};

// Inputs as seen by shape inference: types of all present inputs, values where constant.
struct InferInputs {
  const Node& node;
  // Type of input i; throws (naming the node) when input i is absent.
  const TensorType& type(size_t i) const;
  bool has(size_t i) const { return node.input(i) != nullptr; }
  size_t size() const { return node.num_inputs(); }
  // Constant value of input i, or nullptr when absent or not constant.
  const Tensor* constant(size_t i) const;
  // Constant value of input i as int64 values; throws NeedsConstantInput when not constant.
  std::vector<int64_t> ints(size_t i) const;
};

using InferFn = std::function<std::vector<TensorType>(const InferInputs&)>;
// Computes the outputs from the inputs (nullptr for absent optional inputs). Output types
// are already inferred: node.outputs[k]->type.
using EvalFn = std::function<std::vector<Tensor>(const Node&, const std::vector<const Tensor*>&)>;

struct OpDef {
  std::string name;
  OpKind kind = OpKind::compute;
  InferFn infer;
  EvalFn eval;
  // Output element i depends only on the inputs' elements at i (numpy broadcasting): fusion
  // may fold such an op into a neighbouring kernel's prologue or epilogue.
  bool elementwise = false;
};

// The op definition for `op` in the default domain, or nullptr when vtc does not support it.
const OpDef* find_op(std::string_view op);
// Every registered op, sorted by name.
std::vector<const OpDef*> all_ops();

// Registration entry points, one per family file; called once by the registry.
class OpTable;
void register_movement_ops(OpTable& t);
void register_elementwise_ops(OpTable& t);
void register_nn_ops(OpTable& t);
void register_shape_ops(OpTable& t);

class OpTable {
public:
  void add(OpDef def);
  // Marks every op added since the table held `first` ops as elementwise.
  void mark_elementwise_since(size_t first);
  size_t size() const { return defs_.size(); }
  const OpDef* find(std::string_view op) const;
  std::vector<const OpDef*> all() const;

private:
  std::vector<OpDef> defs_;
};

// Helpers shared by op files.

// Normalises a possibly negative axis for a tensor of `rank` dims; throws naming the node.
int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank);
// One axis of a Slice, by the spec's rules (negative values count from the end, then start is
// clamped into [0, dim] for step > 0 or [0, dim-1] for step < 0, end into [0, dim] or
// [-1, dim-1]): the first element read and how many. Throws naming the node on step 0.
struct SliceAxis {
  int64_t start = 0, len = 0;
};
SliceAxis slice_axis(const Node& node, int64_t dim, int64_t start, int64_t end, int64_t step);
// Numpy-style broadcast of two shapes; throws naming the node on a mismatch.
Shape broadcast_shapes(const Node& node, const Shape& a, const Shape& b);

} // namespace vtc
