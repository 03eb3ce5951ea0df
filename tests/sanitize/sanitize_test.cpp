// Generated code under the sanitizers (Options::sanitize) reports what it must: a step writing
// one element past its buffer, a kernel reading through a mapping that runs one element past its
// base, and undefined arithmetic each end the process with the sanitizer's report — while the
// overrun, outside the sanitizers, lands silently in the arena. The tests need the ASan runtime
// in the process: ctest preloads it (CMakeLists.txt here); a build of vtc with
// -DVTC_SANITIZE=ON has it linked.
#include <fstream>

#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "jit/sanitizer.h"
#include "model_builder.h"
#include "passes/canonicalize.h"
#include "runtime/lowering.h"
#include "runtime_test_util.h"
#include "target/target.h"

namespace vtc::testing {
namespace {

class Sanitize : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    // Death tests re-run the test in a fresh process: no forking of a process whose OpenMP
    // threads hold locks.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ASSERT_TRUE(jit::asan_runtime_loaded())
        << "run with LD_PRELOAD=$(c++ -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0";
  }

  Options sanitized() const {
    Options o = options();
    o.sanitize = true;
    o.threads = 1;
    return o;
  }
};

// AddReluMul whose first step writes t[32], one element past t's 32.
AddReluMul overrunning_program() {
  AddReluMul m;
  const std::string loop = "for (int i = 0; i < 32; ++i) t[i] = a[i] + b[i];";
  size_t at = m.unit.source.find(loop);
  EXPECT_NE(at, std::string::npos);
  m.unit.source.replace(at, loop.size(),
                        "for (int i = 0; i <= 32; ++i) t[i] = a[i % 32] + b[i % 32];");
  return m;
}

void run_once(Session& s) {
  s.run(random_inputs(s, 1));
}

TEST_F(Sanitize, AnOverrunOutsideTheSanitizersLandsInTheArena) {
  AddReluMul m = overrunning_program();
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options());
  EXPECT_NO_THROW(run_once(s)); // nothing notices: the arena holds the bytes past t
}

TEST_F(Sanitize, AnOverrunOfAnIntermediateBufferIsReported) {
  EXPECT_DEATH(
      {
        AddReluMul m = overrunning_program();
        Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), sanitized());
        run_once(s);
      },
      "AddressSanitizer: heap-buffer-overflow.*WRITE of size 4");
}

// x[4,8] -> Softmax -> a -> Transpose -> b -> Softmax -> y: greedy makes a virtual, the first
// Softmax writing b through a's mapping a[i0, i1] -> b[i1, i0]. Off by one in its innermost
// index, that mapping sends a's last element one past b's end.
std::string transpose_model(const std::filesystem::path& dir) {
  ModelBuilder mb;
  mb.input("x", DType::f32, {4, 8});
  ModelBuilder::set_int(mb.node("Softmax", {"x"}, {"a"}, "first"), "axis", 1);
  ModelBuilder::set_ints(mb.node("Transpose", {"a"}, {"b"}, "t"), "perm", {1, 0});
  ModelBuilder::set_int(mb.node("Softmax", {"b"}, {"y"}, "second"), "axis", 1);
  mb.output("y");
  std::string path = (dir / "transpose.onnx").string();
  std::ofstream(path, std::ios::binary) << mb.bytes();
  return path;
}

struct Lowered {
  std::unique_ptr<Graph> graph;
  Program program;
};

Lowered lower_transpose(const std::string& path, const Options& o, bool off_by_one) {
  Lowered l{std::make_unique<Graph>(import_onnx_file(path)), {}};
  canonicalize(*l.graph);
  l.program = lower_for_target(*l.graph, o);
  EXPECT_EQ(l.program.storage.virtual_values.size(), 1u) << print_program(l.program);
  if (off_by_one) {
    // The mapping as the storage map and every step touching the value hold it.
    auto shift = [](Mapping& mapping) {
      IndexExpr& inner = mapping.pieces.at(0).index.back();
      inner = inner + 1;
    };
    for (auto& [value, mapping] : l.program.storage.virtual_values)
      shift(mapping);
    for (StepInfo& step : l.program.steps)
      for (OperandAccess& op : step.operands)
        if (op.mapping) shift(*op.mapping);
  }
  return l;
}

TEST_F(Sanitize, TheTransposeModelRunsCleanUnderTheSanitizers) {
  std::string path = transpose_model(dir_);
  Options o = sanitized();
  o.strategy = StrategyKind::greedy;
  Lowered l = lower_transpose(path, o, false);
  Session s(std::move(l.graph), std::move(l.program), o);
  EXPECT_NO_THROW(run_once(s));
}

TEST_F(Sanitize, AMappingPastItsBaseIsReported) {
  std::string path = transpose_model(dir_);
  EXPECT_DEATH(
      {
        Options o = sanitized();
        o.strategy = StrategyKind::greedy;
        Lowered l = lower_transpose(path, o, true);
        Session s(std::move(l.graph), std::move(l.program), o);
        run_once(s);
      },
      "AddressSanitizer: heap-buffer-overflow");
}

TEST_F(Sanitize, UndefinedArithmeticIsReported) {
  EXPECT_DEATH(
      {
        AddReluMul m;
        const std::string body = "t[i] = a[i] + b[i];";
        size_t at = m.unit.source.find(body);
        ASSERT_NE(at, std::string::npos);
        // A signed overflow the compiler cannot see coming (the bound is volatile).
        m.unit.source.replace(at, body.size(),
                              "{ volatile int big = 2147483647; int sum = big + i + 1; "
                              "t[i] = a[i] + b[i] + float(sum); }");
        Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), sanitized());
        run_once(s);
      },
      "runtime error: signed integer overflow");
}

} // namespace
} // namespace vtc::testing
