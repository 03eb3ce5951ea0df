// Errors a user can cause: unknown, missing or mistyped inputs and outputs, bad options,
// missing model files; and programs the runtime refuses, each message naming what is wrong.
#include "ref/random_inputs.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

using testing::AddReluMul;
using testing::RuntimeTest;

// Runs `fn` and returns the message of the vtc::Error it throws ("" when none).
template <typename F> std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR(stmt, text)                                                                   \
  do {                                                                                             \
    std::string message = error_of([&] { stmt; });                                                 \
    EXPECT_NE(message.find(text), std::string::npos) << "message: '" << message << "'";            \
  } while (0)

class SessionErrors : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    AddReluMul m;
    session_ = std::make_unique<Session>(std::move(m.graph), std::move(m.program),
                                         std::move(m.unit), options());
    a_ = random_tensor({DType::f32, {4, 8}}, 1);
    b_ = random_tensor({DType::f32, {4, 8}}, 2);
  }
  std::unique_ptr<Session> session_;
  Tensor a_, b_, y_{DType::f32, {4, 8}};
};

TEST_F(SessionErrors, MissingInputIsNamed) {
  EXPECT_ERROR(session_->run(HostTensorMap{{"a", a_}}), "missing input 'b' (f32[4,8])");
}

TEST_F(SessionErrors, UnknownInputIsNamedWithTheModelsInputs) {
  EXPECT_ERROR(session_->run(HostTensorMap{{"a", a_}, {"b", b_}, {"c", a_}}),
               "unknown input 'c' (the model's inputs: a, b)");
}

TEST_F(SessionErrors, WrongDtypeIsNamed) {
  Tensor h(DType::f16, {4, 8});
  EXPECT_ERROR(session_->run(HostTensorMap{{"a", a_}, {"b", h}}),
               "input 'b' is f16[4,8], the model expects f32[4,8]");
}

TEST_F(SessionErrors, WrongShapeIsNamed) {
  Tensor wide(DType::f32, {4, 9});
  EXPECT_ERROR(session_->run(HostTensorMap{{"a", wide}, {"b", b_}}),
               "input 'a' is f32[4,9], the model expects f32[4,8]");
}

TEST_F(SessionErrors, NullDataIsNamed) {
  TensorView null{DType::f32, {4, 8}, nullptr};
  EXPECT_ERROR(session_->run(ViewMap{{"a", TensorView::of(a_)}, {"b", null}}),
               "input 'b' has no data");
}

TEST_F(SessionErrors, OutputsAreCheckedLikeInputs) {
  ViewMap in{{"a", TensorView::of(a_)}, {"b", TensorView::of(b_)}};
  EXPECT_ERROR(session_->run(in, {}), "missing output 'y' (f32[4,8])");
  Tensor small(DType::f32, {8});
  EXPECT_ERROR(session_->run(in, {{"y", TensorView::of(small)}}),
               "output 'y' is f32[8], the model expects f32[4,8]");
  EXPECT_ERROR(session_->run(in, {{"y", TensorView::of(y_)}, {"z", TensorView::of(y_)}}),
               "unknown output 'z'");
}

TEST_F(RuntimeTest, BadOptionsAreNamed) {
  Options o = options();
  o.threads = -2;
  EXPECT_ERROR(Session("m.onnx", o), "threads must be >= 0, got -2");
  EXPECT_FALSE(parse_target_kind("tpu"));
  EXPECT_FALSE(parse_strategy_kind("random"));
  AddReluMul m;
  EXPECT_ERROR(
      Session(std::move(m.graph), std::move(m.program), std::move(m.unit), options({"kv"})),
      "donated input 'kv' is not a graph input (inputs: a, b)");
}

TEST_F(RuntimeTest, MissingModelFileIsNamed) {
  std::string path = (dir_ / "absent.onnx").string();
  EXPECT_ERROR(Session(path, options()), path);
}

TEST_F(RuntimeTest, ReferenceTargetHasNoProgram) {
  AddReluMul m;
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options());
  EXPECT_NO_THROW(s.program());
  Options ref = options();
  ref.target = TargetKind::ref;
  AddReluMul m2;
  EXPECT_ERROR(Session(std::move(m2.graph), std::move(m2.program), std::move(m2.unit), ref),
               "target ref compiles no program");
}

TEST_F(RuntimeTest, FallbackReadingAValueWithoutBufferIsRefused) {
  AddReluMul m;
  // Drop t's buffer from the program: the fallback step's Relu can no longer read it.
  m.program.buffers[4].value = nullptr;
  EXPECT_ERROR(Session(std::move(m.graph), std::move(m.program), std::move(m.unit), options()),
               "Relu 'relu' reads 't', which has no buffer");
}

TEST_F(RuntimeTest, StepWritingAConstantIsRefused) {
  AddReluMul m;
  m.program.steps[2].writes.push_back(3);
  EXPECT_ERROR(Session(std::move(m.graph), std::move(m.program), std::move(m.unit), options()),
               "step 2 'k2 mul' writes constant 'w'");
}

TEST_F(RuntimeTest, StepWithoutCodeIsRefused) {
  AddReluMul m;
  m.unit.entries[0].clear();
  EXPECT_ERROR(Session(std::move(m.graph), std::move(m.program), std::move(m.unit), options()),
               "step 0 'k0 add' must have exactly one of a generated entry and a fallback node");
}

TEST_F(RuntimeTest, MissingEntryPointIsNamed) {
  AddReluMul m;
  m.unit.entries[2] = "step_absent";
  EXPECT_ERROR(Session(std::move(m.graph), std::move(m.program), std::move(m.unit), options()),
               "step_absent");
}

TEST_F(RuntimeTest, CompileErrorsNameTheSource) {
  AddReluMul m;
  m.unit.source += "this is not C++;\n";
  std::string message = error_of(
      [&] { Session(std::move(m.graph), std::move(m.program), std::move(m.unit), options()); });
  EXPECT_NE(message.find("compiling generated C++"), std::string::npos) << message;
  EXPECT_NE(message.find("this is not C++;"), std::string::npos) << message;
}

TEST_F(RuntimeTest, AliasOfANonInputIsRefused) {
  AddReluMul m;
  m.program.buffers[2].alias_of = 4;
  EXPECT_ERROR(Session(std::move(m.graph), std::move(m.program), std::move(m.unit), options()),
               "buffer 'y' aliases buffer 4, but only an output may alias an input");
}

} // namespace
} // namespace vtc
