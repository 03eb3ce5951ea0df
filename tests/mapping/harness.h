// Test harness for mapping property tests: builds small graphs node by node (inferring types
// with vtc's op definitions and computing every value with the reference interpreter's
// eval_node), and checks a mapping against the materialised tensors at every index.
#pragma once

#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "mapping/rules.h"

namespace vtc::test {

struct Builder {
  Graph g;
  std::mt19937_64 rng;
  std::map<const Value*, Tensor> env; // every value's tensor
  int counter = 0;

  explicit Builder(uint64_t seed) : rng(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool coin() { return uniform(0, 1) == 1; }
  // A graph input of f32 elements, each distinct (base + flat index).
  Value* input(const Shape& shape, double base = 1);
  // A run-time integer input (graph input) or a constant, holding `t`.
  Value* ints(const Tensor& t, bool constant);
  // Adds a node, infers its outputs and evaluates it.
  Node* node(const std::string& op, std::vector<Value*> ins, int n_outputs,
             std::map<std::string, Attribute> attrs = {});
};

// Tensors of every base a mapping may name: graph values plus a rule's derived tables.
struct BaseEnv {
  std::map<const Base*, const Tensor*> tensors;
  void add(const Builder& b);
  void add(const RuleResult& r);
  const Tensor& at(const Base* base) const;
  LoadFn loader() const;
};

// Checks `m` (virtual tensor `expected`) at every index; returns "" or the first mismatch.
std::string check_read(const Mapping& m, const Tensor& expected, const BaseEnv& env);
// Checks that `m` at every index i lands where `original` does at at(i): the same base element
// (the same value for constant pieces). Returns "" or the first mismatch.
std::string check_same_as(const Mapping& m, const Mapping& original,
                          const std::function<Shape(const Shape&)>& at, const BaseEnv& env);
// Simulates writing each input through its mapping (in input order) and checks every written
// element against the reference; `all_written` says whether every element of every target
// was written. Returns "" or the first mismatch.
std::string check_writes(const std::vector<std::pair<const Mapping*, const Tensor*>>& writes,
                         const BaseEnv& env, bool* all_written);

} // namespace vtc::test
