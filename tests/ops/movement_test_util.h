// Test helpers for the data-movement op tests: a one-node graph builder that runs an op's
// shape inference and reference evaluation, small tensor constructors, and checks that compare
// tensors bit for bit or expect a vtc::Error naming the node.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "ref/interpreter.h"
#include "vtc/error.h"

namespace vtc::movement_test {

// One node with its inputs (graph inputs or constants), built when first inferred or run.
class NodeCase {
public:
  explicit NodeCase(std::string op, size_t n_out = 1) : op_(std::move(op)), n_out_(n_out) {}

  NodeCase& in(Tensor t) { return add(std::move(t), false); }
  NodeCase& cst(Tensor t) { return add(std::move(t), true); }
  NodeCase& skip() {
    inputs_.emplace_back();
    present_.push_back(false);
    constant_.push_back(false);
    return *this;
  }
  NodeCase& attr(const std::string& key, Attribute v) {
    attrs_[key] = std::move(v);
    return *this;
  }

  std::vector<TensorType> infer() {
    build();
    const OpDef* def = find_op(op_);
    EXPECT_TRUE(def) << op_ << " is not registered";
    if (def) {
      EXPECT_EQ(def->kind, OpKind::data_movement) << op_;
    }
    return def->infer(InferInputs{*node_});
  }

  std::vector<Tensor> run() {
    std::vector<TensorType> types = infer();
    EXPECT_EQ(types.size(), n_out_);
    for (size_t k = 0; k < types.size() && k < n_out_; ++k) {
      node_->outputs[k]->type = types[k];
      node_->outputs[k]->has_type = true;
    }
    std::vector<const Tensor*> ptrs;
    for (size_t i = 0; i < inputs_.size(); ++i)
      ptrs.push_back(present_[i] ? &inputs_[i] : nullptr);
    return eval_node(*node_, ptrs);
  }

  Tensor run1() {
    std::vector<Tensor> outs = run();
    return outs.empty() ? Tensor() : outs[0];
  }

private:
  NodeCase& add(Tensor t, bool constant) {
    inputs_.push_back(std::move(t));
    present_.push_back(true);
    constant_.push_back(constant);
    return *this;
  }

  void build() {
    if (node_) return;
    std::vector<Value*> ins, outs;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      std::string name = "in" + std::to_string(i);
      if (!present_[i]) {
        ins.push_back(nullptr);
      } else if (constant_[i]) {
        ins.push_back(g_.add_constant(name, inputs_[i]));
        ins.back()->has_type = true;
      } else {
        Value* v = g_.add_value(name);
        v->type = inputs_[i].type();
        v->has_type = true;
        ins.push_back(v);
      }
    }
    for (size_t k = 0; k < n_out_; ++k)
      outs.push_back(g_.add_value("out" + std::to_string(k)));
    node_ = g_.add_node(op_, "the_node", ins, outs);
    node_->attrs = attrs_;
  }

  std::string op_;
  size_t n_out_;
  std::vector<Tensor> inputs_;
  std::vector<bool> present_, constant_;
  std::map<std::string, Attribute> attrs_;
  Graph g_;
  Node* node_ = nullptr;
};

using I64s = std::vector<int64_t>;

inline Tensor ints(const I64s& v) {
  return Tensor::from<int64_t>({int64_t(v.size())}, v);
}
inline Tensor ints_i32(Shape shape, const std::vector<int32_t>& v) {
  return Tensor::from<int32_t>(std::move(shape), v);
}
inline Tensor ints(Shape shape, const I64s& v) {
  return Tensor::from<int64_t>(std::move(shape), v);
}

// 0, 1, 2, ... as f32 of the given shape.
inline Tensor iota(Shape shape) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_f64(i, double(i));
  return t;
}

inline std::string values_str(const Tensor& t) {
  std::ostringstream os;
  os << type_str(t.type()) << " {";
  for (int64_t i = 0; i < t.numel(); ++i)
    os << (i ? ", " : "") << t.get_f64(i);
  return os.str() + "}";
}

template <typename T> void expect_tensor(const Tensor& got, Shape shape, const std::vector<T>& v) {
  ASSERT_EQ(int64_t(v.size()), shape_numel(shape)) << "bad expectation";
  Tensor want = Tensor::from<T>(std::move(shape), v);
  EXPECT_TRUE(got.bitwise_equal(want))
      << "got  " << values_str(got) << "\nwant " << values_str(want);
}

inline void expect_f32(const Tensor& got, Shape shape, const std::vector<float>& v) {
  expect_tensor<float>(got, std::move(shape), v);
}

// Expects fn to throw vtc::Error whose message names the node and contains `needle`.
inline void expect_error(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("the_node"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

inline std::vector<float> range_f(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.f);
  return v;
}

} // namespace vtc::movement_test
