// Session on hand-written Programs: generated steps, a fallback step with a value that lives
// only inside it, constants and intermediates in the arena; results bitwise equal to the
// reference interpreter, outputs written zero-copy into caller memory, timing and memory
// figures; and the model-file path for targets ref and cpu.
#include <cstring>
#include <fstream>

#include "frontend/onnx_import.h"
#include "model_builder.h"
#include "ref/compare.h"
#include "ref/interpreter.h"
#include "ref/random_inputs.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

using testing::AddReluMul;
using testing::random_inputs;
using testing::RuntimeTest;

// y = relu(a + b) over [3, 5] f32 inputs, written as an ONNX file at `path` (returned).
std::string write_add_relu(const std::string& path) {
  testing::ModelBuilder b;
  b.input("a", DType::f32, {3, 5});
  b.input("b", DType::f32, {3, 5});
  b.node("Add", {"a", "b"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"y"}, "relu");
  b.output("y");
  std::ofstream(path, std::ios::binary) << b.bytes();
  return path;
}

TEST_F(RuntimeTest, HandWrittenProgramMatchesTheReferenceBitwise) {
  AddReluMul m;
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options());
  HostTensorMap in = random_inputs(s, 1);
  HostTensorMap out = s.run(in);
  TensorMap expected = run_reference(s.graph(), in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out.at("y").bitwise_equal(expected.at("y")));
  // Not trivially zero: Relu(a + b) is positive about half the time.
  double norm = 0;
  for (int64_t i = 0; i < 32; ++i)
    norm += std::abs(out.at("y").get_f64(i));
  EXPECT_GT(norm, 0.1);
}

TEST_F(RuntimeTest, ReportsArenaConstantsStepTimesAndProgram) {
  AddReluMul m;
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options());
  // t (steps 0..1) and u (steps 1..2) are live together at step 1: 2 x 128 bytes.
  EXPECT_EQ(s.peak_bytes(), 256);
  EXPECT_EQ(s.constant_bytes(), 128);
  EXPECT_TRUE(s.has_program());
  EXPECT_EQ(s.program().steps.size(), 3u);
  EXPECT_GT(s.compile_seconds(), 0);
  EXPECT_EQ(s.inputs().size(), 2u);
  EXPECT_EQ(s.outputs()[0].name, "y");
  EXPECT_TRUE(s.last_step_times().empty() || s.last_step_times().size() == 3);
  s.run(random_inputs(s, 3));
  ASSERT_EQ(s.last_step_times().size(), 3u);
  for (double t : s.last_step_times())
    EXPECT_GE(t, 0);
}

TEST_F(RuntimeTest, SecondSessionLoadsTheCachedObject) {
  AddReluMul a, b;
  Session first(std::move(a.graph), std::move(a.program), std::move(a.unit), options());
  Session second(std::move(b.graph), std::move(b.program), std::move(b.unit), options());
  EXPECT_GT(first.compile_seconds(), 0);
  EXPECT_EQ(second.compile_seconds(), 0);
}

TEST_F(RuntimeTest, OutputsAreWrittenIntoCallerMemory) {
  AddReluMul m;
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options());
  HostTensorMap in = random_inputs(s, 5);
  Tensor y(DType::f32, {4, 8});
  s.run({{"a", TensorView::of(in.at("a"))}, {"b", TensorView::of(in.at("b"))}},
        {{"y", TensorView::of(y)}});
  TensorMap expected = run_reference(s.graph(), in);
  EXPECT_TRUE(y.bitwise_equal(expected.at("y")));
  // Run again on new inputs into the same memory: the result changes with them.
  HostTensorMap in2 = random_inputs(s, 9);
  s.run({{"a", TensorView::of(in2.at("a"))}, {"b", TensorView::of(in2.at("b"))}},
        {{"y", TensorView::of(y)}});
  EXPECT_TRUE(y.bitwise_equal(run_reference(s.graph(), in2).at("y")));
}

// y1 = Neg(a) written by step 0, then y2 = a + a read by step 1: binding y1 to a's memory
// would feed step 1 the negated values unless y1 is computed aside and copied out.
struct WriteBeforeRead {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  Program program;
  TranslationUnit unit;

  WriteBeforeRead() {
    TensorType f{DType::f32, {8}};
    Value* a = testing::graph_input(*graph, "a", f);
    Value* y1 = testing::typed(graph->add_value("y1"), f);
    Value* y2 = testing::typed(graph->add_value("y2"), f);
    graph->add_node("Neg", "neg", {a}, {y1});
    graph->add_node("Add", "double", {a, a}, {y2});
    testing::graph_output(*graph, y1);
    testing::graph_output(*graph, y2);
    program.inputs = {testing::add_buffer(program, a, BufferRole::input)};
    program.outputs = {testing::add_buffer(program, y1, BufferRole::output),
                       testing::add_buffer(program, y2, BufferRole::output)};
    program.steps.push_back(testing::step_of("neg", {0}, {1}, 64, 8));
    unit.entries.push_back("step_neg");
    program.steps.push_back(testing::step_of("double", {0}, {2}, 64, 8));
    unit.entries.push_back("step_double");
    unit.source = R"(
extern "C" void step_neg(void* const* buf, const void*, void*) {
  for (int i = 0; i < 8; ++i) static_cast<float*>(buf[1])[i] = -static_cast<float*>(buf[0])[i];
}
extern "C" void step_double(void* const* buf, const void*, void*) {
  const float* a = static_cast<const float*>(buf[0]);
  for (int i = 0; i < 8; ++i) static_cast<float*>(buf[2])[i] = a[i] + a[i];
}
)";
  }
};

TEST_F(RuntimeTest, OutputSharingAnInputsMemoryIsStillCorrect) {
  WriteBeforeRead m;
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options());
  HostTensorMap in = random_inputs(s, 7);
  TensorMap expected = run_reference(s.graph(), in);
  Tensor a = in.at("a"), y2(DType::f32, {8});
  s.run({{"a", TensorView::of(a)}}, {{"y1", TensorView::of(a)}, {"y2", TensorView::of(y2)}});
  EXPECT_TRUE(a.bitwise_equal(expected.at("y1")));
  EXPECT_TRUE(y2.bitwise_equal(expected.at("y2")));
}

TEST_F(RuntimeTest, ReferenceTargetRunsTheSameApi) {
  const std::string path = write_add_relu((dir_ / "add_relu.onnx").string());

  Options ref = options();
  ref.target = TargetKind::ref;
  Session r(path, ref);
  EXPECT_FALSE(r.has_program());
  EXPECT_EQ(r.peak_bytes(), 0);
  EXPECT_TRUE(r.last_step_times().empty());
  HostTensorMap in = random_inputs(r, 11);
  Tensor y(DType::f32, {3, 5});
  r.run({{"a", TensorView::of(in.at("a"))}, {"b", TensorView::of(in.at("b"))}},
        {{"y", TensorView::of(y)}});
  for (int64_t i = 0; i < y.numel(); ++i)
    EXPECT_EQ(y.get_f64(i),
              std::max(0.0, double(in.at("a").data<float>()[i] + in.at("b").data<float>()[i])));

  Options cpu = options();
  cpu.strategy = StrategyKind::none;
  Session c(path, cpu);
  EXPECT_TRUE(c.has_program());
  EXPECT_TRUE(c.run(in).at("y").bitwise_equal(y));
}

// `path` on target cuda, or null and `why` (the Session's error) where no GPU runs it.
std::unique_ptr<Session> cuda_session(const std::string& path, Options o, std::string& why) {
  o.target = TargetKind::cuda;
  try {
    return std::make_unique<Session>(path, o);
  } catch (const Error& e) {
    why = e.what();
    return nullptr;
  }
}

// Whether `s` computes output "y" of `path` bit for bit as the reference interpreter does.
bool y_is_the_reference(Session& s, const std::string& path, Options o, uint64_t seed) {
  o.target = TargetKind::ref;
  Session r(path, o);
  HostTensorMap in = random_inputs(r, seed);
  return s.run(in).at("y").bitwise_equal(r.run(in).at("y"));
}

// Target cuda runs where there is a GPU; everywhere else the Session says why in one line.
TEST_F(RuntimeTest, CudaTargetRunsOrSaysWhyNot) {
  const std::string path = write_add_relu((dir_ / "add_relu_cuda.onnx").string());
  std::string why;
  std::unique_ptr<Session> s = cuda_session(path, options(), why);
  if (!s) {
    EXPECT_EQ(why.rfind("target cuda: ", 0), 0u) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    GTEST_SKIP() << why;
  }
  EXPECT_TRUE(y_is_the_reference(*s, path, options(), 12));
}

// A graph of ops cuda has no kernel for runs wholly on the interpreter: no unit is loaded, and
// the step reads and writes device buffers through host copies.
TEST_F(RuntimeTest, CudaRunsAGraphWhollyOnTheInterpreter) {
  testing::ModelBuilder b;
  b.input("x", DType::f32, {4, 6});
  b.node("Acos", {"x"}, {"y"}, "acos");
  b.output("y");
  const std::string path = (dir_ / "acos.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  std::string why;
  std::unique_ptr<Session> s = cuda_session(path, options(), why);
  if (!s) GTEST_SKIP() << why;
  for (const StepInfo& step : s->program().steps)
    ASSERT_FALSE(step.fallback.empty()) << step.name << " is generated: choose another op";
  EXPECT_TRUE(y_is_the_reference(*s, path, options(), 3));
}

// On cuda the greedy plan (a Concat whose pieces are written in place, Type I) is timed
// against all-physical, and whichever is kept computes the reference's bits; with
// Options::profile off, or on the cpu, no plan is timed.
TEST_F(RuntimeTest, CudaGreedyPlanIsProfiledAgainstAllPhysical) {
  testing::ModelBuilder b;
  b.input("x", DType::f32, {64, 48});
  b.node("Relu", {"x"}, {"a"}, "relu");
  b.node("Abs", {"x"}, {"s"}, "abs"); // exact, as Relu and Neg: the reference's bits on cuda
  testing::ModelBuilder::set_int(b.node("Concat", {"a", "s"}, {"c"}, "join"), "axis", 0);
  b.node("Neg", {"c"}, {"y"}, "neg");
  b.output("y");
  const std::string path = (dir_ / "concat_neg.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  EXPECT_FALSE(Session(path, options()).profiled_plan());
  std::string why;
  std::unique_ptr<Session> s = cuda_session(path, options(), why);
  if (!s) GTEST_SKIP() << why;
  ASSERT_TRUE(s->profiled_plan());
  EXPECT_GT(s->profiled_plan()->greedy_ms, 0.0);
  EXPECT_GT(s->profiled_plan()->physical_ms, 0.0);
  EXPECT_EQ(s->program().strategy, s->profiled_plan()->kept_physical ? "none" : "greedy");
  EXPECT_TRUE(y_is_the_reference(*s, path, options(), 5));
  Options plain_options = options();
  plain_options.profile = false;
  std::unique_ptr<Session> plain = cuda_session(path, plain_options, why);
  ASSERT_TRUE(plain) << why;
  EXPECT_FALSE(plain->profiled_plan());
  EXPECT_EQ(plain->program().strategy, "greedy");
}

// LayerNormalization's epsilon reaches the kernel exactly: a constant row (variance 0) with
// epsilon 1e-12 normalises to beta, not to NaN (an epsilon printed with six decimals is 0).
TEST_F(RuntimeTest, LayerNormEpsilonIsExact) {
  testing::ModelBuilder b;
  b.input("x", DType::f32, {2, 8});
  Tensor gamma(DType::f32, {8}), beta(DType::f32, {8});
  for (int64_t i = 0; i < 8; ++i) {
    gamma.data<float>()[i] = 1.0f;
    beta.data<float>()[i] = float(i);
  }
  b.initializer("gamma", gamma);
  b.initializer("beta", beta);
  onnx::NodeProto& n = b.node("LayerNormalization", {"x", "gamma", "beta"}, {"y"}, "ln");
  onnx::AttributeProto* eps = n.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(1e-12f);
  b.output("y");
  std::string path = (dir_ / "layer_norm_eps.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  Session s(path, options());
  Tensor x(DType::f32, {2, 8});
  for (int64_t i = 0; i < 16; ++i)
    x.data<float>()[i] = i < 8 ? 3.0f : float(i);
  Tensor y = s.run(HostTensorMap{{"x", x}}).at("y");
  Options ref = options();
  ref.target = TargetKind::ref;
  Tensor expected = Session(path, ref).run(HostTensorMap{{"x", x}}).at("y");
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(y.data<float>()[i], float(i)) << i;
  EXPECT_TRUE(compare_allclose(y, expected, 1e-5, 1e-6).ok);
}

} // namespace
} // namespace vtc
