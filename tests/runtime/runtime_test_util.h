// Hand-written graphs and the Programs a lowering would make of them, for testing the runtime
// without the compiler: each program has generated steps (tiny C++ step functions), fallback
// steps on the graph's own nodes, constants and intermediates; the graph's reference
// semantics is the expected result.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "codegen/translation_unit.h"
#include "lower/program.h"
#include "ref/compare.h"
#include "ref/random_inputs.h"
#include "vtc/vtc.h"

namespace vtc::testing {

// A graph value that is a graph input.
inline Value* graph_input(Graph& g, const std::string& name, TensorType type) {
  Value* v = g.add_value(name);
  v->type = std::move(type);
  v->has_type = true;
  v->is_graph_input = true;
  g.inputs.push_back(v);
  return v;
}

inline Value* typed(Value* v, TensorType type) {
  v->type = std::move(type);
  v->has_type = true;
  return v;
}

inline void graph_output(Graph& g, Value* v) {
  v->is_graph_output = true;
  g.outputs.push_back(v);
}

inline int add_buffer(Program& p, const Value* v, BufferRole role) {
  p.buffers.push_back({v->name, v->type, role, v, -1});
  return int(p.buffers.size()) - 1;
}

// A step of a hand-written program: generated (its entry point named in the translation
// unit) when `fallback` is empty, else run on the reference interpreter.
inline StepInfo step_of(std::string name, std::vector<int> reads, std::vector<int> writes,
                        int64_t bytes, int64_t flops, std::vector<const Node*> fallback = {}) {
  StepInfo s;
  s.name = std::move(name);
  s.kind = fallback.empty() ? StepKind::kernel : StepKind::interpreter;
  s.fallback = std::move(fallback);
  s.reads = std::move(reads);
  s.writes = std::move(writes);
  s.bytes = bytes;
  s.flops = flops;
  return s;
}

// y = Neg(Relu(a + b)) * w over f32[4,8], with w a constant:
//   step 0  generated  t = a + b
//   step 1  fallback   Relu(t) -> r (no buffer: lives in the step), Neg(r) -> u
//   step 2  generated  y = u * w
// Buffers: 0 a, 1 b (inputs), 2 y (output), 3 w (constant), 4 t, 5 u (intermediates).
struct AddReluMul {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  Program program;
  TranslationUnit unit;

  AddReluMul() {
    TensorType f{DType::f32, {4, 8}};
    Graph& g = *graph;
    Value* a = graph_input(g, "a", f);
    Value* b = graph_input(g, "b", f);
    std::vector<float> wv(32);
    for (size_t i = 0; i < wv.size(); ++i)
      wv[i] = 0.25f * float(i % 7) - 0.5f;
    Value* w = g.add_constant("w", Tensor::from<float>({4, 8}, wv));
    w->type = f;
    w->has_type = true;
    Value* t = typed(g.add_value("t"), f);
    Value* r = typed(g.add_value("r"), f);
    Value* u = typed(g.add_value("u"), f);
    Value* y = typed(g.add_value("y"), f);
    g.add_node("Add", "add", {a, b}, {t});
    const Node* relu = g.add_node("Relu", "relu", {t}, {r});
    const Node* neg = g.add_node("Neg", "neg", {r}, {u});
    g.add_node("Mul", "mul", {u, w}, {y});
    graph_output(g, y);

    Program& p = program;
    p.inputs = {add_buffer(p, a, BufferRole::input), add_buffer(p, b, BufferRole::input)};
    p.outputs = {add_buffer(p, y, BufferRole::output)};
    add_buffer(p, w, BufferRole::constant);
    add_buffer(p, t, BufferRole::intermediate);
    add_buffer(p, u, BufferRole::intermediate);
    p.strategy = "none";
    p.steps.push_back(step_of("k0 add", {0, 1}, {4}, 384, 32));
    unit.entries.push_back("step_add");
    p.steps.push_back(step_of("k1 relu neg", {4}, {5}, 256, 64, {relu, neg}));
    unit.entries.push_back("");
    p.steps.push_back(step_of("k2 mul", {5, 3}, {2}, 384, 32));
    unit.entries.push_back("step_mul");
    unit.source = R"(
extern "C" void step_add(void* const* buf, const void*, void*) {
  const float* a = static_cast<const float*>(buf[0]);
  const float* b = static_cast<const float*>(buf[1]);
  float* t = static_cast<float*>(buf[4]);
  for (int i = 0; i < 32; ++i) t[i] = a[i] + b[i];
}
extern "C" void step_mul(void* const* buf, const void*, void*) {
  const float* u = static_cast<const float*>(buf[5]);
  const float* w = static_cast<const float*>(buf[3]);
  float* y = static_cast<float*>(buf[2]);
  for (int i = 0; i < 32; ++i) y[i] = u[i] * w[i];
}
)";
  }
};

// A state updated in place: new_state = state + x over f32[16], with `state` donated and
// `new_state` aliased to it; a second output `sum` = the total of new_state, f32[1].
// Buffers: 0 state, 1 x (inputs), 2 new_state (output aliased to 0), 3 sum (output).
struct InPlaceAccumulate {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  Program program;
  TranslationUnit unit;

  InPlaceAccumulate() {
    TensorType f{DType::f32, {16}};
    Graph& g = *graph;
    Value* state = graph_input(g, "state", f);
    Value* x = graph_input(g, "x", f);
    Value* next = typed(g.add_value("new_state"), f);
    Value* sum = typed(g.add_value("sum"), {DType::f32, {1}});
    g.add_node("Add", "accumulate", {state, x}, {next});
    Node* reduce = g.add_node("ReduceSum", "total", {next}, {sum});
    reduce->attrs["keepdims"] = int64_t(1);
    graph_output(g, next);
    graph_output(g, sum);

    Program& p = program;
    p.inputs = {add_buffer(p, state, BufferRole::input), add_buffer(p, x, BufferRole::input)};
    p.outputs = {add_buffer(p, next, BufferRole::output), add_buffer(p, sum, BufferRole::output)};
    p.buffers[2].alias_of = 0;
    p.strategy = "none";
    p.steps.push_back(step_of("k0 accumulate", {0, 1}, {2}, 192, 16));
    unit.entries.push_back("step_acc");
    p.steps.push_back(step_of("k1 total", {2}, {3}, 68, 16));
    unit.entries.push_back("step_sum");
    unit.source = R"(
extern "C" void step_acc(void* const* buf, const void*, void*) {
  const float* x = static_cast<const float*>(buf[1]);
  float* s = static_cast<float*>(buf[2]); // the state's own buffer
  for (int i = 0; i < 16; ++i) s[i] += x[i];
}
extern "C" void step_sum(void* const* buf, const void*, void*) {
  const float* s = static_cast<const float*>(buf[2]);
  float total = 0;
  for (int i = 0; i < 16; ++i) total += s[i];
  *static_cast<float*>(buf[3]) = total;
}
)";
  }
};

// A scratch compile cache per test, removed afterwards.
// Seeded random values for every input of the session's model, one seed per input from `seed`.
inline HostTensorMap random_inputs(const Session& s, uint64_t seed) {
  HostTensorMap m;
  for (const TensorSpec& in : s.inputs())
    m.emplace(in.name, random_tensor(in.type, seed++));
  return m;
}

// Deterministic f32 values for weights: scale * ((i + salt) % 13 - 6) at flat index i.
inline Tensor ramp(const Shape& s, float scale, int salt = 0) {
  std::vector<float> v(size_t(shape_numel(s)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = scale * float(int((i + size_t(salt)) % 13) - 6);
  return Tensor::from<float>(s, v);
}

// Runs the model at `path` on target "ref" and under the cpu target's strategies none, type1
// and greedy (`base` otherwise), from the same seeded inputs: every output must be within
// `tol` (relative L2) of the reference's and bitwise equal to none's. `inspect`, when given,
// checks each strategy's session further.
inline void expect_strategies_match_reference(
    const std::string& path, const Options& base, double tol,
    const std::function<void(const std::string&, const Session&)>& inspect = nullptr) {
  Options ref_options = base;
  ref_options.target = TargetKind::ref;
  Session ref(path, ref_options);
  const HostTensorMap in = random_inputs(ref, 3);
  const HostTensorMap expected = ref.run(in);
  std::optional<HostTensorMap> none;
  for (const char* strategy : {"none", "type1", "greedy"}) {
    Options o = base;
    o.strategy = *parse_strategy_kind(strategy);
    Session s(path, o);
    if (inspect) inspect(strategy, s);
    const HostTensorMap out = s.run(in);
    for (const auto& [name, want] : expected) {
      const Comparison c = compare_rel_l2(out.at(name), want, tol);
      EXPECT_TRUE(c.ok) << strategy << ", " << name << ": " << c.message << " (rel L2 "
                        << c.rel_l2_err << ")";
      if (none) {
        EXPECT_TRUE(out.at(name).bitwise_equal(none->at(name)))
            << strategy << ", " << name << " against none";
      }
    }
    if (!none) none = out;
  }
}

class RuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("vtc-runtime-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Options options(std::vector<std::string> donate = {}) const {
    Options o;
    o.cache_dir = (dir_ / "cache").string();
    o.donate = std::move(donate);
    return o;
  }

  std::filesystem::path dir_;
};

} // namespace vtc::testing
