// Donated inputs: an output aliased to a donated input is computed in that input's buffer —
// in place when the caller binds the output to the input's memory (a KV cache across decode
// steps), after a copy when it binds it elsewhere; the allocating overloads never change
// their inputs; a program that writes an input nobody donated is refused.
#include "ref/random_inputs.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

using testing::InPlaceAccumulate;
using testing::RuntimeTest;

float total(const Tensor& t) {
  float s = 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    s += t.data<float>()[i];
  return s;
}

TEST_F(RuntimeTest, AliasedOutputUpdatesTheDonatedInputInPlace) {
  InPlaceAccumulate m;
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options({"state"}));
  EXPECT_TRUE(s.inputs()[0].donated);
  EXPECT_FALSE(s.inputs()[1].donated);
  EXPECT_EQ(s.outputs()[0].aliased_input, "state");
  EXPECT_EQ(s.outputs()[1].aliased_input, "");

  Tensor state = random_tensor({DType::f32, {16}}, 1);
  Tensor x = random_tensor({DType::f32, {16}}, 2);
  Tensor initial = state, sum(DType::f32, {1});
  for (int step = 1; step <= 3; ++step) {
    s.run({{"state", TensorView::of(state)}, {"x", TensorView::of(x)}},
          {{"new_state", TensorView::of(state)}, {"sum", TensorView::of(sum)}});
    for (int64_t i = 0; i < 16; ++i) {
      float expected = initial.data<float>()[i];
      for (int k = 0; k < step; ++k)
        expected += x.data<float>()[i];
      EXPECT_EQ(state.data<float>()[i], expected) << "step " << step << " element " << i;
    }
    EXPECT_EQ(sum.data<float>()[0], total(state));
  }
}

TEST_F(RuntimeTest, AliasedOutputBoundElsewhereLeavesTheInputUntouched) {
  InPlaceAccumulate m;
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options({"state"}));
  Tensor state = random_tensor({DType::f32, {16}}, 3);
  Tensor x = random_tensor({DType::f32, {16}}, 4);
  Tensor before = state, next(DType::f32, {16}), sum(DType::f32, {1});
  s.run({{"state", TensorView::of(state)}, {"x", TensorView::of(x)}},
        {{"new_state", TensorView::of(next)}, {"sum", TensorView::of(sum)}});
  EXPECT_TRUE(state.bitwise_equal(before));
  for (int64_t i = 0; i < 16; ++i)
    EXPECT_EQ(next.data<float>()[i], before.data<float>()[i] + x.data<float>()[i]);
  EXPECT_EQ(sum.data<float>()[0], total(next));
}

TEST_F(RuntimeTest, AllocatingRunsNeverModifyTheirInputs) {
  InPlaceAccumulate m;
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options({"state"}));
  HostTensorMap in{{"state", random_tensor({DType::f32, {16}}, 5)},
                   {"x", random_tensor({DType::f32, {16}}, 6)}};
  Tensor before = in.at("state");
  HostTensorMap out = s.run(in);
  EXPECT_TRUE(in.at("state").bitwise_equal(before));
  for (int64_t i = 0; i < 16; ++i)
    EXPECT_EQ(out.at("new_state").data<float>()[i],
              before.data<float>()[i] + in.at("x").data<float>()[i]);

  Tensor state = before;
  out = s.run(ViewMap{{"state", TensorView::of(state)}, {"x", TensorView::of(in.at("x"))}});
  EXPECT_TRUE(state.bitwise_equal(before));
  EXPECT_EQ(out.at("sum").data<float>()[0], total(out.at("new_state")));
}

TEST_F(RuntimeTest, ProgramWritingAnInputThatIsNotDonatedIsRefused) {
  InPlaceAccumulate m;
  try {
    Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("writes input 'state', which is not donated"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(RuntimeTest, DonatedBufferSharingAnotherInputsMemoryIsAnError) {
  InPlaceAccumulate m;
  Session s(std::move(m.graph), std::move(m.program), std::move(m.unit), options({"state"}));
  Tensor state = random_tensor({DType::f32, {16}}, 7), x = state, sum(DType::f32, {1});
  // new_state bound to x's memory: the state would be copied over x, then updated while x is
  // read.
  try {
    s.run({{"state", TensorView::of(state)}, {"x", TensorView::of(x)}},
          {{"new_state", TensorView::of(x)}, {"sum", TensorView::of(sum)}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("donated input 'state' shares memory with input 'x'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(x.bitwise_equal(state)); // refused before anything was written
}

} // namespace
} // namespace vtc
