// Run-time indices on the compiled targets: for each indexing op (Gather, GatherElements,
// GatherND, ScatterND, ScatterElements), with the indices given as an input and computed in
// the graph, under every strategy, an index in range (negative ones included) gives the
// reference interpreter's bits, and one out of range fails the run with the reference
// interpreter's one-line error, leaving every output and the donated input as they were.
// Constant indices out of range are refused when the model is compiled. The cuda target runs
// the same cases where a GPU is present.
#include <cstdio>
#include <fstream>

#include "model_builder.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

using testing::ModelBuilder;
using testing::RuntimeTest;

struct IndexCase {
  std::string name;
  ModelBuilder model;
  std::string indices_input;         // the input holding (or giving) the indices
  Tensor good, bad;                  // its values: all in range / one out of range
  std::vector<std::string> donate{}; // a donated input updated in place
};

Tensor ints(Shape shape, std::vector<int64_t> v) {
  return Tensor::from<int64_t>(std::move(shape), v);
}

// The indices "i" of a case: an input, or computed in the graph as j + 2 from an input j
// (whose values are then the indices minus 2).
void add_indices(IndexCase& c, const Shape& shape, bool computed) {
  ModelBuilder& b = c.model;
  if (!computed) {
    b.input("i", DType::i64, shape);
    c.indices_input = "i";
    return;
  }
  c.name += "_computed";
  c.indices_input = "j";
  b.input("j", DType::i64, shape);
  b.initializer("two", ints({1}, {2}));
  b.node("Add", {"j", "two"}, {"i"}, "offset");
  for (Tensor* t : {&c.good, &c.bad})
    for (int64_t k = 0; k < t->numel(); ++k)
      t->data<int64_t>()[k] -= 2;
}

// x f32[6, 4]; y = Relu(Gather(x, i [3], axis 0)).
IndexCase gather_case(bool computed) {
  IndexCase c{"gather", ModelBuilder(), "", ints({3}, {0, -1, 5}), ints({3}, {1, 6, 2})};
  ModelBuilder& b = c.model;
  b.input("x", DType::f32, {6, 4});
  add_indices(c, {3}, computed);
  ModelBuilder::set_int(b.node("Gather", {"x", "i"}, {"g"}, "gather"), "axis", 0);
  b.node("Relu", {"g"}, {"y"}, "relu");
  b.output("y");
  return c;
}

// x f32[3, 5]; y = Neg(GatherElements(x, i [3, 2], axis 1)).
IndexCase gather_elements_case(bool computed) {
  IndexCase c{"gather_elements", ModelBuilder(), "", ints({3, 2}, {0, 4, -5, 2, 3, -1}),
              ints({3, 2}, {0, 4, 1, 2, -6, 1})};
  ModelBuilder& b = c.model;
  b.input("x", DType::f32, {3, 5});
  add_indices(c, {3, 2}, computed);
  ModelBuilder::set_int(b.node("GatherElements", {"x", "i"}, {"g"}, "gather_elements"), "axis", 1);
  b.node("Neg", {"g"}, {"y"}, "neg");
  b.output("y");
  return c;
}

// x f32[4, 3, 2]; y = Relu(GatherND(x, i [2, 2])): tuples over axes 0 and 1.
IndexCase gather_nd_case(bool computed) {
  IndexCase c{"gather_nd", ModelBuilder(), "", ints({2, 2}, {3, 2, -4, -3}),
              ints({2, 2}, {3, 1, 1, 3})}; // 3 is out of range for axis 1 only
  ModelBuilder& b = c.model;
  b.input("x", DType::f32, {4, 3, 2});
  add_indices(c, {2, 2}, computed);
  b.node("GatherND", {"x", "i"}, {"g"}, "gather_nd");
  b.node("Relu", {"g"}, {"y"}, "relu");
  b.output("y");
  return c;
}

// A cache f32[8, 4], donated, row i [1, 1] replaced by u: the KV-cache update of a decode step.
IndexCase scatter_nd_case(bool computed) {
  IndexCase c{"scatter_nd", ModelBuilder(), "", ints({1, 1}, {-3}), ints({1, 1}, {8}), {"cache"}};
  ModelBuilder& b = c.model;
  b.input("cache", DType::f32, {8, 4});
  add_indices(c, {1, 1}, computed);
  b.input("u", DType::f32, {1, 4});
  b.node("ScatterND", {"cache", "i", "u"}, {"new_cache"}, "scatter_nd");
  b.output("new_cache");
  return c;
}

// x f32[4, 3]; y = Relu(ScatterElements(x, i [2, 3], u, axis 0)).
IndexCase scatter_elements_case(bool computed) {
  IndexCase c{"scatter_elements", ModelBuilder(), "", ints({2, 3}, {0, 1, 2, 3, -4, -1}),
              ints({2, 3}, {0, 1, 2, 3, -5, 1})};
  ModelBuilder& b = c.model;
  b.input("x", DType::f32, {4, 3});
  add_indices(c, {2, 3}, computed);
  b.input("u", DType::f32, {2, 3});
  ModelBuilder::set_int(b.node("ScatterElements", {"x", "i", "u"}, {"s"}, "scatter_elements"),
                        "axis", 0);
  b.node("Relu", {"s"}, {"y"}, "relu");
  b.output("y");
  return c;
}

std::vector<IndexCase> index_cases() {
  std::vector<IndexCase> cases;
  for (bool computed : {false, true}) {
    cases.push_back(gather_case(computed));
    cases.push_back(gather_elements_case(computed));
    cases.push_back(gather_nd_case(computed));
    cases.push_back(scatter_nd_case(computed));
    cases.push_back(scatter_elements_case(computed));
  }
  return cases;
}

// The session, or null (the test then skips that target) where the cuda target has no GPU.
std::unique_ptr<Session> open_session(const std::string& path, const Options& o) {
  try {
    return std::make_unique<Session>(path, o);
  } catch (const Error& e) {
    const std::string message = e.what();
    if (o.target == TargetKind::cuda && message.rfind("target cuda: ", 0) == 0) return nullptr;
    throw;
  }
}

std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

class IndexCheckTest : public RuntimeTest {
protected:
  // Every case under every strategy on `target`; false where the target has no device.
  bool check_target(TargetKind target) {
    for (IndexCase& c : index_cases()) {
      const std::string path = (dir_ / (c.name + ".onnx")).string();
      std::ofstream(path, std::ios::binary) << c.model.bytes();
      Options ref_options = options(c.donate);
      ref_options.target = TargetKind::ref;
      Session ref(path, ref_options);
      HostTensorMap good = testing::random_inputs(ref, 7), bad = good;
      good[c.indices_input] = c.good;
      bad[c.indices_input] = c.bad;
      const HostTensorMap expected = ref.run(good);
      const std::string expected_error = error_of([&] { ref.run(bad); });
      EXPECT_NE(expected_error, "(no error)") << c.name;
      std::printf("%s, %s: %s\n", target_kind_name(target), c.name.c_str(), expected_error.c_str());
      for (StrategyKind strategy :
           {StrategyKind::none, StrategyKind::type1, StrategyKind::greedy}) {
        Options o = options(c.donate);
        o.target = target;
        o.strategy = strategy;
        const std::string what = c.name + " " + strategy_kind_name(strategy);
        std::unique_ptr<Session> s = open_session(path, o);
        if (!s) return false;
        for (const auto& [name, t] : s->run(good))
          EXPECT_TRUE(t.bitwise_equal(expected.at(name))) << what << ": output " << name;

        // In place, bound as a decode loop binds it: outputs preset, the donated input also
        // the memory of the output aliased to it.
        HostTensorMap inputs = bad, outputs;
        ViewMap in, out;
        for (auto& [name, t] : inputs)
          in[name] = TensorView::of(t);
        for (const TensorSpec& spec : s->outputs()) {
          if (!spec.aliased_input.empty()) {
            out[spec.name] = in.at(spec.aliased_input);
            continue;
          }
          Tensor& t = outputs.emplace(spec.name, Tensor(spec.type)).first->second;
          for (int64_t k = 0; k < t.numel(); ++k)
            t.data<float>()[k] = 7.0f;
          out[spec.name] = TensorView::of(t);
        }
        EXPECT_EQ(error_of([&] { s->run(in, out); }), expected_error) << what;
        for (const auto& [name, t] : inputs)
          EXPECT_TRUE(t.bitwise_equal(bad.at(name))) << what << ": input " << name << " changed";
        for (const auto& [name, t] : outputs) {
          int64_t written = 0;
          for (int64_t k = 0; k < t.numel(); ++k)
            written += t.data<float>()[k] != 7.0f;
          EXPECT_EQ(written, 0) << what << ": output " << name << " written";
        }

        // The failure leaves nothing behind: the next good run is right.
        for (const auto& [name, t] : s->run(good))
          EXPECT_TRUE(t.bitwise_equal(expected.at(name)))
              << what << ": output " << name << " after a failed run";
      }
    }
    return true;
  }
};

TEST_F(IndexCheckTest, CpuChecksEveryRunTimeIndex) {
  check_target(TargetKind::cpu);
}

TEST_F(IndexCheckTest, CudaChecksEveryRunTimeIndexOnTheDevice) {
  if (!check_target(TargetKind::cuda)) GTEST_SKIP() << "no usable GPU";
}

// A decode step's two uses of the position: a rotary table row (Gather) and the KV-cache tuple
// (batch, head, pos) built from a constant grid and the position reshaped and expanded. The
// tuple holds nothing the Gather's check and the constants do not already bound, so the
// program checks the position once, and an out-of-range position is still the reference's
// error.
TEST_F(IndexCheckTest, DerivedIndicesAnEarlierCheckBoundsAreNotCheckedAgain) {
  ModelBuilder b;
  b.input("table", DType::f32, {32, 4});
  b.input("cache", DType::f32, {1, 2, 32, 4});
  b.input("pos", DType::i64, {1});
  b.input("u", DType::f32, {1, 2, 1, 4});
  b.initializer("grid", ints({1, 2, 1, 2}, {0, 0, 0, 1}));
  b.initializer("pos_shape", ints({4}, {1, 1, 1, 1}));
  b.initializer("grid_shape", ints({4}, {1, 2, 1, 1}));
  ModelBuilder::set_int(b.node("Gather", {"table", "pos"}, {"row"}, "rotary"), "axis", 0);
  b.node("Relu", {"row"}, {"y"}, "relu");
  b.node("Reshape", {"pos", "pos_shape"}, {"pos4"}, "pos_reshape");
  b.node("Expand", {"pos4", "grid_shape"}, {"pos_grid"}, "pos_expand");
  ModelBuilder::set_int(b.node("Concat", {"grid", "pos_grid"}, {"tuple"}, "tuple"), "axis", -1);
  b.node("ScatterND", {"cache", "tuple", "u"}, {"new_cache"}, "cache_update");
  b.output("y");
  b.output("new_cache");
  const std::string path = (dir_ / "decode.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  Options ref_options = options({"cache"});
  ref_options.target = TargetKind::ref;
  Session ref(path, ref_options);
  HostTensorMap good = testing::random_inputs(ref, 3), bad = good;
  good["pos"] = ints({1}, {-3});
  bad["pos"] = ints({1}, {40});
  const HostTensorMap expected = ref.run(good);
  const std::string expected_error = error_of([&] { ref.run(bad); });
  EXPECT_EQ(expected_error,
            "Gather 'rotary': index 40 out of range [-32, 31] for axis 0 of size 32");
  for (StrategyKind strategy : {StrategyKind::none, StrategyKind::greedy}) {
    Options o = options({"cache"});
    o.strategy = strategy;
    Session s(path, o);
    int checks = 0;
    for (const StepInfo& step : s.program().steps)
      checks += step.kind == StepKind::index_check;
    EXPECT_EQ(checks, 1) << strategy_kind_name(strategy);
    for (const auto& [name, t] : s.run(good))
      EXPECT_TRUE(t.bitwise_equal(expected.at(name))) << name;
    EXPECT_EQ(error_of([&] { s.run(bad); }), expected_error);
  }
}

TEST_F(IndexCheckTest, ConstantIndicesOutOfRangeAreRefusedAtCompileTime) {
  ModelBuilder b;
  b.input("x", DType::f32, {6, 4});
  b.initializer("i", ints({2}, {1, -7}));
  b.node("Gather", {"x", "i"}, {"g"}, "gather");
  b.node("Relu", {"g"}, {"y"}, "relu");
  b.output("y");
  const std::string path = (dir_ / "constant.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  EXPECT_EQ(error_of([&] { Session s(path, options()); }),
            "Gather 'gather': index -7 out of range [-6, 5] for axis 0 of size 6");
}

} // namespace
} // namespace vtc
