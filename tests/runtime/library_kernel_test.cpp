// Library kernels through the Session: f32 MatMul and Gemm models (batched with broadcasting,
// matrix times vector, transposed operands, alpha and beta, fused epilogues) run on OpenBLAS
// (Options::library "always") and on the template ("never") agree with the reference
// interpreter; strategies none, type1 and greedy stay bitwise equal with library kernels;
// a library kernel's operands stay physical under greedy where the template's would not; the
// program names the library in its steps and links it; per-node modes override the mode; a
// node's time in a plan counts the copies that feed only its step, and the profiled per-node
// choice takes vtc's kernel only where it is faster by more than the margin.
#include <fstream>

#include "frontend/onnx_import.h"
#include "model_builder.h"
#include "passes/canonicalize.h"
#include "ref/compare.h"
#include "ref/interpreter.h"
#include "ref/random_inputs.h"
#include "runtime/library_profile.h"
#include "runtime/lowering.h"
#include "runtime_test_util.h"
#include "strategy/strategy.h"
#include "target/cpu_kernel_choice.h"

namespace vtc {
namespace {

using testing::ModelBuilder;
using testing::ramp;
using testing::RuntimeTest;

void set_float(onnx::NodeProto& n, const std::string& key, float v) {
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

// x [2, 8, 32] -> Transpose (8, 2, 32) -> MatMul w [32, 24] -> + bias -> Relu -> Reshape
// [16, 24]: the Transpose's result is a read-side virtual tensor for the template, a copy for
// the library. Also a [3, 1, 5, 16] . b [1, 4, 16, 7] (both batches broadcast) and
// m [6, 10] . v [10] (a matrix times a vector).
ModelBuilder matmul_model() {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 8, 32});
  b.input("a", DType::f32, {3, 1, 5, 16});
  b.input("b", DType::f32, {1, 4, 16, 7});
  b.input("m", DType::f32, {6, 10});
  b.input("v", DType::f32, {10});
  b.initializer("w", ramp({32, 24}, 0.125f));
  b.initializer("bias", ramp({24}, 0.5f));
  b.initializer("shape", Tensor::from<int64_t>({2}, {16, 24}));
  ModelBuilder::set_ints(b.node("Transpose", {"x"}, {"xt"}, "to_rows"), "perm", {1, 0, 2});
  b.node("MatMul", {"xt", "w"}, {"mm"}, "proj");
  b.node("Add", {"mm", "bias"}, {"biased"}, "add_bias");
  b.node("Relu", {"biased"}, {"act"}, "relu");
  b.node("Reshape", {"act", "shape"}, {"y"}, "flatten");
  b.node("MatMul", {"a", "b"}, {"batched"}, "batched");
  b.node("MatMul", {"m", "v"}, {"column"}, "column");
  b.output("y");
  b.output("batched");
  b.output("column");
  return b;
}

// y = Sigmoid(0.5 * A^T . B^T + 2 * c) with A [12, 9], B [10, 12] graph inputs, c [10].
ModelBuilder gemm_model() {
  ModelBuilder b;
  b.input("A", DType::f32, {12, 9});
  b.input("B", DType::f32, {10, 12});
  b.initializer("c", ramp({10}, 0.25f));
  onnx::NodeProto& g = b.node("Gemm", {"A", "B", "c"}, {"g"}, "gemm");
  ModelBuilder::set_int(g, "transA", 1);
  ModelBuilder::set_int(g, "transB", 1);
  set_float(g, "alpha", 0.5f);
  set_float(g, "beta", 2.0f);
  b.node("Sigmoid", {"g"}, {"y"}, "act");
  b.output("y");
  return b;
}

class LibraryKernels : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    if (!openblas_available()) GTEST_SKIP() << "built without OpenBLAS";
  }

  std::string write(const ModelBuilder& b, const std::string& name) {
    std::string path = (dir_ / (name + ".onnx")).string();
    std::ofstream(path, std::ios::binary) << b.bytes();
    return path;
  }

  HostTensorMap inputs_of(const Session& s) {
    HostTensorMap m;
    uint64_t seed = 40;
    for (const TensorSpec& in : s.inputs())
      m.emplace(in.name, random_tensor(in.type, seed++));
    return m;
  }

  HostTensorMap run(const std::string& path, const std::string& library,
                    const std::string& strategy = "greedy") {
    Options o = options();
    o.library = *parse_library_mode(library);
    o.strategy = *parse_strategy_kind(strategy);
    Session s(path, o);
    return s.run(inputs_of(s));
  }

  // Outputs of `library` against the reference interpreter, within the f32 model tolerance.
  void expect_matches_reference(const std::string& path, const std::string& library) {
    Options o = options();
    o.library = *parse_library_mode(library);
    Session s(path, o);
    HostTensorMap in = inputs_of(s);
    HostTensorMap out = s.run(in);
    TensorMap expected = run_reference(s.graph(), in);
    for (const auto& [name, t] : out) {
      Comparison c = compare_rel_l2(t, expected.at(name), model_tolerance(DType::f32));
      EXPECT_TRUE(c.ok) << library << " " << name << ": " << c.message;
    }
  }
};

TEST_F(LibraryKernels, MatMulOnOpenBlasAndTemplateMatchTheReference) {
  std::string path = write(matmul_model(), "matmul");
  expect_matches_reference(path, "always");
  expect_matches_reference(path, "never");
}

TEST_F(LibraryKernels, GemmWithTransposesAlphaBetaAndEpilogueMatchesTheReference) {
  std::string path = write(gemm_model(), "gemm");
  expect_matches_reference(path, "always");
  expect_matches_reference(path, "never");
}

TEST_F(LibraryKernels, StrategiesAreBitwiseEqualWithLibraryKernels) {
  for (const char* model : {"matmul", "gemm"}) {
    std::string path = write(std::string(model) == "matmul" ? matmul_model() : gemm_model(), model);
    HostTensorMap none = run(path, "always", "none");
    for (const char* strategy : {"type1", "greedy"}) {
      HostTensorMap other = run(path, "always", strategy);
      for (const auto& [name, t] : none)
        EXPECT_TRUE(other.at(name).bitwise_equal(t)) << model << " " << strategy << " " << name;
    }
  }
}

TEST_F(LibraryKernels, ProgramNamesAndLinksTheLibrary) {
  std::string path = write(matmul_model(), "matmul");
  Options o = options();
  o.library = LibraryMode::always;
  Session s(path, o);
  int library_steps = 0;
  for (const StepInfo& step : s.program().steps)
    library_steps += step.name.find("(openblas sgemm)") != std::string::npos;
  EXPECT_EQ(library_steps, 3);
  EXPECT_EQ(s.translation_unit().libraries, std::vector<std::string>{"openblas"});
  int openblas_kernels = 0;
  for (const StepInfo& step : s.program().steps)
    openblas_kernels += step.kernel && step.kernel->impl == KernelImpl::openblas_sgemm;
  EXPECT_EQ(openblas_kernels, 3);

  o.library = LibraryMode::never;
  Session t(path, o);
  EXPECT_TRUE(t.translation_unit().libraries.empty());
  for (const StepInfo& step : t.program().steps)
    EXPECT_FALSE(step.kernel && step.kernel->impl == KernelImpl::openblas_sgemm) << step.name;
}

TEST_F(LibraryKernels, LibraryOperandsStayPhysicalUnderGreedy) {
  Graph g = import_onnx_bytes(matmul_model().bytes(), ".", "matmul.onnx");
  canonicalize(g);
  auto transposed = [&](const std::string& library) {
    Options o;
    o.library = *parse_library_mode(library);
    KernelPlan plan = plan_kernels(g, o);
    Strategy s = choose_strategy(plan.kg, plan.strategy, AnalyticCostModel());
    const Value* xt = nullptr;
    for (const Kernel& k : plan.kg.kernels) {
      if (!k.anchor || k.anchor->name != "proj") continue;
      EXPECT_EQ(k.impl,
                library == "always" ? KernelImpl::openblas_sgemm : KernelImpl::vtc_template);
      for (const Value* v : library_operands(k))
        EXPECT_FALSE(s.is_virtual(v)) << v->name;
      xt = k.anchor->inputs[0];
    }
    EXPECT_NE(xt, nullptr);
    return xt && s.is_virtual(xt);
  };
  EXPECT_FALSE(transposed("always")); // OpenBLAS reads the transposed copy
  EXPECT_TRUE(transposed("never"));   // the template reads x through the Transpose's mapping
}

TEST_F(LibraryKernels, PerNodeModesOverrideTheLibraryMode) {
  Graph g = import_onnx_bytes(matmul_model().bytes(), ".", "matmul.onnx");
  canonicalize(g);
  Options o;
  o.library = LibraryMode::always;
  o.library_nodes = {{"proj", LibraryMode::never}};
  KernelPlan plan = plan_kernels(g, o);
  int anchors = 0;
  for (const Kernel& k : plan.kg.kernels) {
    if (!k.anchor || k.anchor->op != "MatMul") continue;
    ++anchors;
    EXPECT_EQ(k.impl,
              k.anchor->name == "proj" ? KernelImpl::vtc_template : KernelImpl::openblas_sgemm)
        << k.anchor->name;
  }
  EXPECT_EQ(anchors, 3);
  o.library_nodes = {{"no_such_node", LibraryMode::never}};
  try {
    plan_kernels(g, o);
    ADD_FAILURE() << "a mode for a node no kernel is built around was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'no_such_node'"), std::string::npos) << e.what();
  }
}

// The greedy program of matmul_model under `library`, lowered on cpu.
Program lowered(const Graph& g, LibraryMode library) {
  Options o;
  o.library = library;
  return lower_for_target(g, o);
}

int step_of(const Program& p, const std::string& name_part) {
  for (size_t s = 0; s < p.steps.size(); ++s)
    if (p.steps[s].name.find(name_part) != std::string::npos) return int(s);
  return -1;
}

TEST_F(LibraryKernels, NodeTimesCountTheCopiesThatFeedOnlyTheirStep) {
  Graph g = import_onnx_bytes(matmul_model().bytes(), ".", "matmul.onnx");
  canonicalize(g);
  const Program library = lowered(g, LibraryMode::always);
  const Program own = lowered(g, LibraryMode::never);
  const std::vector<std::pair<std::string, std::string>> nodes = library_nodes(library);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].second, kernel_impl_name(KernelImpl::openblas_sgemm));
  EXPECT_TRUE(library_nodes(own).empty());

  // Step s takes 2^s ms, so each sum names the steps in it.
  auto powers = [](const Program& p) {
    std::vector<double> ms;
    for (size_t s = 0; s < p.steps.size(); ++s)
      ms.push_back(double(1 << s));
    return ms;
  };
  const int transpose = step_of(library, "copy Transpose 'to_rows'");
  const int proj = step_of(library, "[MatMul 'proj'");
  ASSERT_GE(transpose, 0) << print_program(library); // OpenBLAS reads the transposed copy
  ASSERT_GE(proj, 0);
  EXPECT_EQ(node_ms(library, powers(library), "proj"), double((1 << transpose) + (1 << proj)));
  const int batched = step_of(library, "[MatMul 'batched'");
  EXPECT_EQ(node_ms(library, powers(library), "batched"), double(1 << batched));
  EXPECT_EQ(step_of(own, "copy Transpose"), -1); // vtc's kernel reads through the mapping
  EXPECT_EQ(node_ms(own, powers(own), "proj"), double(1 << step_of(own, "[MatMul 'proj'")));
  EXPECT_EQ(node_ms(own, powers(own), "no_such_node"), 0.0);

  // vtc's kernel 10 % faster on proj, 2 % on batched, slower on column: with a 5 % margin
  // only proj leaves the library.
  std::vector<double> library_ms(library.steps.size(), 0.0), own_ms(own.steps.size(), 0.0);
  library_ms[size_t(transpose)] = 0.5;
  library_ms[size_t(proj)] = 0.5;
  library_ms[size_t(batched)] = 1.0;
  library_ms[size_t(step_of(library, "[MatMul 'column'"))] = 1.0;
  own_ms[size_t(step_of(own, "[MatMul 'proj'"))] = 0.9;
  own_ms[size_t(step_of(own, "[MatMul 'batched'"))] = 0.98;
  own_ms[size_t(step_of(own, "[MatMul 'column'"))] = 1.5;
  const std::vector<ProfiledNode> timed = compare_nodes(library, library_ms, own, own_ms, 0.05);
  ASSERT_EQ(timed.size(), 3u);
  std::map<std::string, bool> on_library;
  for (const ProfiledNode& n : timed)
    on_library[n.node] = n.on_library;
  EXPECT_FALSE(on_library.at("proj"));
  EXPECT_TRUE(on_library.at("batched"));
  EXPECT_TRUE(on_library.at("column"));
  const std::map<std::string, LibraryMode> modes = vtc_kernel_modes(timed);
  ASSERT_EQ(modes.size(), 1u);
  EXPECT_EQ(modes.at("proj"), LibraryMode::never);
}

TEST(LibraryModeNames, ParseWhatTheCliAccepts) {
  EXPECT_EQ(parse_library_mode("auto"), LibraryMode::automatic);
  EXPECT_EQ(parse_library_mode("always"), LibraryMode::always);
  EXPECT_FALSE(parse_library_mode("sometimes"));
  EXPECT_STREQ(library_mode_name(LibraryMode::never), "never");
}

} // namespace
} // namespace vtc
