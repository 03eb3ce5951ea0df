// Random chains of 2-5 data-movement ops composed into one mapping: read sides composed from
// the last op back to the first give the final output in terms of the graph inputs; write
// sides composed from the first op on give where each element of the first input lands. Both
// are checked at every index against the reference interpreter.
#include <gtest/gtest.h>

#include "gen_ops.h"
#include "mapping/compose.h"

namespace vtc::test {
namespace {

constexpr int kChains = 200;

TEST(ChainProperty, ComposedReadSidesMatchReference) {
  int checked = 0, unrepresentable = 0;
  for (int k = 0; k < kChains; ++k) {
    Builder b(9000 + uint64_t(k));
    Value* x0 = b.input(random_shape(b, 1, 4, 5));
    std::vector<ChainStep> steps = random_chain(b, x0, false, int(b.uniform(2, 5)));
    ASSERT_GE(steps.size(), 2u);
    BaseEnv env;
    env.add(b);
    Result<Mapping> composed = compose_read_chain(steps);
    std::string trace = steps[0].node->op;
    for (size_t s = 1; s < steps.size(); ++s)
      trace += " -> " + steps[s].node->op;
    for (const ChainStep& s : steps)
      env.add(s.rule);
    if (!composed.ok()) {
      EXPECT_FALSE(composed.reason.empty());
      ++unrepresentable;
      continue;
    }
    const Mapping& m = *composed;
    for (const Piece& p : m.pieces) {
      if (p.base) {
        EXPECT_FALSE(p.base->key && static_cast<const Value*>(p.base->key)->producer)
            << "composed mapping still reads an intermediate: " << to_string(m);
      }
    }
    std::string err = check_read(m, b.env.at(steps.back().node->output(steps.back().out)), env);
    ASSERT_EQ(err, "") << "chain " << k << ": " << trace << "\n" << to_string(m);
    ++checked;
  }
  std::printf("[ property ] read chains: %d checked, %d not representable as one mapping\n",
              checked, unrepresentable);
  EXPECT_GE(checked, kChains * 3 / 4);
}

TEST(ChainProperty, ComposedWriteSidesMatchReference) {
  int checked = 0, unrepresentable = 0;
  for (int k = 0; k < kChains; ++k) {
    Builder b(19000 + uint64_t(k));
    Value* x0 = b.input(random_shape(b, 1, 4, 5));
    std::vector<ChainStep> steps = random_chain(b, x0, true, int(b.uniform(2, 5)));
    ASSERT_GE(steps.size(), 2u);
    Mapping m = *steps[0].rule.mappings[steps[0].in];
    bool ok = true;
    std::string trace = steps[0].node->op;
    for (size_t s = 1; s < steps.size() && ok; ++s) {
      trace += " -> " + steps[s].node->op;
      Result<Mapping> c = compose(m, value_base(steps[s].node->input(steps[s].in)),
                                  *steps[s].rule.mappings[steps[s].in]);
      if (!c.ok())
        ok = false;
      else
        m = *c;
    }
    if (!ok) {
      ++unrepresentable;
      continue;
    }
    const BaseEnv env = chain_env(b, steps);
    bool all = false;
    std::string err = check_writes({{&m, &b.env.at(x0)}}, env, &all);
    ASSERT_EQ(err, "") << "chain " << k << ": " << trace << "\n" << to_string(m);
    ++checked;
  }
  std::printf("[ property ] write chains: %d checked, %d not representable as one mapping\n",
              checked, unrepresentable);
  EXPECT_GE(checked, kChains * 3 / 4);
}

} // namespace
} // namespace vtc::test
