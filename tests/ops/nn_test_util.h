// Test harness for the neural-network op tests (nn_*_test.cpp): builds a one-node graph named
// "n" whose operands are run-time inputs, constants (visible to shape inference) or omitted,
// runs the op's shape inference and then its reference evaluation, and compares results with
// expected values. Inputs come from a deterministic pattern that the Python script producing
// the expected values (onnx.reference, float64) reproduces exactly:
//   v[i] = (((i * 37 + seed * 17) mod 101) - 50) / 25.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/op_registry.h"
#include "ref/interpreter.h"
#include "vtc/error.h"

namespace vtc::nn_test {

using Attrs = std::map<std::string, Attribute>;

// One operand of the node under test.
struct Arg {
  std::optional<Tensor> tensor; // nullopt: omitted optional input
  bool constant = false;        // a constant is visible to shape inference
};
inline Arg in(Tensor t) {
  return Arg{std::move(t), false};
}
inline Arg cst(Tensor t) {
  return Arg{std::move(t), true};
}
inline Arg none() {
  return Arg{};
}

// The node under test inside its own graph.
struct NodeUnderTest {
  Graph g;
  Node* node = nullptr;
};

inline const OpDef& op_def(const std::string& op) {
  const OpDef* d = find_op(op);
  if (!d) throw Error("op " + op + " is not registered");
  return *d;
}

// Builds the node; `outputs` lists which output slots exist (false: omitted optional output).
inline std::unique_ptr<NodeUnderTest> build(const std::string& op, const std::vector<Arg>& args,
                                            const Attrs& attrs, const std::vector<bool>& outputs) {
  auto t = std::make_unique<NodeUnderTest>();
  std::vector<Value*> ins, outs;
  for (size_t k = 0; k < args.size(); ++k) {
    if (!args[k].tensor) {
      ins.push_back(nullptr);
      continue;
    }
    std::string name = "x" + std::to_string(k);
    Value* v = args[k].constant ? t->g.add_constant(name, *args[k].tensor) : t->g.add_value(name);
    v->type = args[k].tensor->type();
    v->has_type = true;
    ins.push_back(v);
  }
  for (size_t k = 0; k < outputs.size(); ++k)
    outs.push_back(outputs[k] ? t->g.add_value("y" + std::to_string(k)) : nullptr);
  t->node = t->g.add_node(op, "n", ins, outs);
  t->node->attrs = attrs;
  return t;
}

// Shape inference only.
inline std::vector<TensorType> infer(const std::string& op, const std::vector<Arg>& args,
                                     const Attrs& attrs = {},
                                     const std::vector<bool>& outputs = {true}) {
  auto t = build(op, args, attrs, outputs);
  return op_def(op).infer(InferInputs{*t->node});
}

// Shape inference, then the reference evaluation; one tensor per output slot.
inline std::vector<Tensor> run(const std::string& op, const std::vector<Arg>& args,
                               const Attrs& attrs = {}, const std::vector<bool>& outputs = {true}) {
  auto t = build(op, args, attrs, outputs);
  std::vector<TensorType> types = op_def(op).infer(InferInputs{*t->node});
  if (types.size() != outputs.size()) throw Error(op + ": inferred output count differs");
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k]) continue;
    t->node->outputs[k]->type = types[k];
    t->node->outputs[k]->has_type = true;
  }
  std::vector<const Tensor*> ptrs;
  for (const Arg& a : args)
    ptrs.push_back(a.tensor ? &*a.tensor : nullptr);
  return eval_node(*t->node, ptrs);
}

inline Tensor run1(const std::string& op, const std::vector<Arg>& args, const Attrs& attrs = {}) {
  return run(op, args, attrs).at(0);
}

// The deterministic input pattern (see the file comment), stored as `dtype`.
inline Tensor pattern(DType dtype, Shape shape, int seed) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_f64(i, double(((i * 37 + seed * 17) % 101) - 50) / 25.0);
  return t;
}

inline Tensor f64(Shape shape, const std::vector<double>& v) {
  return Tensor::from(shape, v);
}
inline Tensor f32(Shape shape, const std::vector<float>& v) {
  return Tensor::from(shape, v);
}
inline Tensor i64(Shape shape, const std::vector<int64_t>& v) {
  return Tensor::from(shape, v);
}
inline Tensor i32(Shape shape, const std::vector<int32_t>& v) {
  return Tensor::from(shape, v);
}
inline Tensor scalar_i64(int64_t v) {
  return Tensor::from<int64_t>({}, {v});
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    v[size_t(i)] = t.get_f64(i);
  return v;
}

// Every element within `tol` (absolute plus relative) of `expected`, and the shape as given.
inline void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& expected,
                          double tol = 1e-9) {
  ASSERT_EQ(shape_str(t.shape()), shape_str(shape));
  ASSERT_EQ(size_t(t.numel()), expected.size());
  for (int64_t i = 0; i < t.numel(); ++i) {
    double e = expected[size_t(i)], a = t.get_f64(i);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << "element " << i;
      continue;
    }
    EXPECT_NEAR(a, e, tol * (1 + std::abs(e))) << "element " << i;
  }
}

} // namespace vtc::nn_test

// Expects `stmt` to throw vtc::Error whose message names the node ("'n'") and contains
// `fragment`.
#define EXPECT_NODE_ERROR(stmt, fragment)                                                          \
  do {                                                                                             \
    try {                                                                                          \
      stmt;                                                                                        \
      ADD_FAILURE() << "no error from: " #stmt;                                                    \
    } catch (const ::vtc::Error& e) {                                                              \
      std::string msg = e.what();                                                                  \
      EXPECT_NE(msg.find("'n'"), std::string::npos) << msg;                                        \
      EXPECT_NE(msg.find(fragment), std::string::npos) << msg;                                     \
    }                                                                                              \
  } while (0)
