// Property tests of every data-movement rule, in both directions: on 200 seeded random shapes
// and attributes per op, the read-side mapping evaluated at every output index equals the
// reference interpreter's output, and writing each input through its write-side mapping puts
// every element where the reference output has it.
#include <gtest/gtest.h>

#include "gen_ops.h"
#include "mapping/analysis.h"

namespace vtc::test {
namespace {

constexpr int kCases = 200;

struct Param {
  std::string op;
  bool write;
};

class RuleProperty : public testing::TestWithParam<Param> {};

uint64_t seed_of(const std::string& op, int k, bool write) {
  return std::hash<std::string>{}(op)*31 + uint64_t(k) * 2 + (write ? 1 : 0);
}

TEST_P(RuleProperty, MatchesReferenceOnRandomCases) {
  const Param& p = GetParam();
  int checked = 0, impossible = 0;
  for (int k = 0; k < kCases; ++k) {
    Builder b(seed_of(p.op, k, p.write));
    Node* n = random_op(b, p.op, nullptr, p.write);
    ASSERT_NE(n, nullptr) << p.op;
    BaseEnv env;
    env.add(b);
    SCOPED_TRACE(p.op + " case " + std::to_string(k) + " input " +
                 shape_str(n->input(0)->type.shape));
    if (!p.write) {
      RuleResult r = read_side(*n);
      ASSERT_TRUE(r.ok()) << r.reason;
      env.add(r);
      ASSERT_EQ(r.mappings.size(), n->outputs.size());
      for (size_t o = 0; o < n->outputs.size(); ++o) {
        ASSERT_TRUE(r.mappings[o]);
        std::string err = check_read(*r.mappings[o], b.env.at(n->output(o)), env);
        ASSERT_EQ(err, "") << to_string(*r.mappings[o]);
      }
      ++checked;
      continue;
    }
    RuleResult r = write_side(*n);
    bool repeats = (p.op == "Expand" || p.op == "Tile") &&
                   n->input(0)->type.numel() != n->output(0)->type.numel();
    ASSERT_EQ(r.ok(), !repeats) << r.reason;
    if (!r.ok()) {
      EXPECT_NE(r.reason.find(n->describe()), std::string::npos) << r.reason;
      ++impossible;
      continue;
    }
    env.add(r);
    std::vector<std::pair<const Mapping*, const Tensor*>> writes;
    std::vector<const Mapping*> all;
    for (size_t i = 0; i < r.mappings.size(); ++i) {
      if (!r.mappings[i]) continue;
      writes.emplace_back(&*r.mappings[i], &b.env.at(n->input(i)));
      all.push_back(&*r.mappings[i]);
      EXPECT_NE(injective(*r.mappings[i]), Tri::no) << to_string(*r.mappings[i]);
    }
    ASSERT_FALSE(writes.empty());
    bool all_written = false;
    std::string err = check_writes(writes, env, &all_written);
    ASSERT_EQ(err, "") << to_string(*writes[0].first);
    for (const Value* out : n->outputs)
      if (covers(all, value_base(out)) == Tri::yes) {
        EXPECT_TRUE(all_written);
      }
    ++checked;
  }
  std::printf("[ property ] %s %s: %d cases checked, %d impossible by rule\n", p.op.c_str(),
              p.write ? "write" : "read", checked, impossible);
  EXPECT_EQ(checked + impossible, kCases);
  EXPECT_GT(checked, p.write && (p.op == "Expand" || p.op == "Tile") ? 0 : kCases - 1);
}

std::vector<Param> params() {
  std::vector<Param> v;
  for (const std::string& op : generated_ops()) {
    v.push_back({op, false});
    v.push_back({op, true});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Ops, RuleProperty, testing::ValuesIn(params()),
                         [](const testing::TestParamInfo<Param>& i) {
                           return i.param.op + (i.param.write ? "_write" : "_read");
                         });

TEST(RuleTable, EveryGeneratedOpHasARuleAndImpossibleSidesSayWhy) {
  for (const std::string& op : generated_ops())
    EXPECT_NE(find_movement_rule(op), nullptr) << op;
  Builder b(1);
  Value* x = b.input({2, 3});
  Node* n = b.node("Tile", {x, b.ints(Tensor::from<int64_t>({2}, {2, 1}), true)}, 1);
  RuleResult r = write_side(*n);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.reason.find("not injective"), std::string::npos) << r.reason;
  Node* g = b.node("Gather", {x, b.ints(Tensor::from<int64_t>({2}, {1, 0}), false)}, 1);
  EXPECT_NE(write_side(*g).reason.find("run time"), std::string::npos) << write_side(*g).reason;
  Node* s =
      b.node("ScatterND", {x, b.ints(Tensor::from<int64_t>({1, 1}, {1}), true), b.input({1, 3})}, 1,
             {{"reduction", std::string("add")}});
  EXPECT_NE(read_side(*s).reason.find("combines"), std::string::npos);
  Node* m = b.node("MatMul", {x, b.input({3, 2})}, 1);
  EXPECT_NE(read_side(*m).reason.find("no data-movement rule"), std::string::npos);
}

} // namespace
} // namespace vtc::test
