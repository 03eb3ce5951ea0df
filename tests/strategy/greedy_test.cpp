// The global greedy search: on the paper's figure 6 graph with the K cache donated it finds
// strategy 1 (every tensor virtual of the K cache); without donation it leaves the cache alone;
// `type1` takes only Type I options; `none` nothing; and the result is the same every run.
#include <gtest/gtest.h>

#include <algorithm>

#include "strategy/synthetic.h"
#include "support.h"

namespace vtc::testing {
namespace {

std::vector<std::string> chosen_edges(const Strategy& s) {
  std::vector<std::string> out;
  const Vtog& g = *s.vtog;
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (s.chosen[t] >= 0)
      for (int e : g.options[size_t(s.chosen[t])].edges)
        out.push_back(g.edge_name(e) + " " + option_kind_name(g.options[size_t(s.chosen[t])].kind));
  std::sort(out.begin(), out.end());
  return out;
}

void expect_reference_outputs(const Graph& graph, const Strategy& s, const TensorMap& inputs) {
  TensorMap expected = run_reference(graph, inputs), actual = simulate(s, inputs);
  for (auto& [name, t] : expected)
    EXPECT_TRUE(t.bitwise_equal(actual.at(name))) << name;
}

TEST(Greedy, PaperFigure6PicksStrategy1) {
  Model m = unfused(paper_figure6_graph());
  Strategy s = choose_strategy(m.kg, {StrategyKind::greedy, {"k_cache"}}, AnalyticCostModel());
  std::vector<std::string> expected = {
      "a -> b write", "a -> q write", "a -> v write",
      "b -> c write", "c -> d write", "d -> k_cache in place",
  };
  EXPECT_EQ(chosen_edges(s), expected);
  EXPECT_TRUE(s.copies().empty());
  EXPECT_EQ(s.eliminated_nodes().size(), 3u);
  EXPECT_EQ(s.virtual_mappings().size(), 4u); // a, b, c, d
  EXPECT_LT(s.latency, s.latency_none);
  expect_reference_outputs(*m.graph, s, paper_figure6_inputs(*m.graph));
}

TEST(Greedy, WithoutDonationTheCacheStaysPhysical) {
  Model m = unfused(paper_figure6_graph());
  Strategy s = choose_strategy(m.kg, {StrategyKind::greedy, {}}, AnalyticCostModel());
  EXPECT_FALSE(s.is_virtual(m.graph->find_value("d")));
  ASSERT_EQ(s.copies().size(), 1u);
  EXPECT_EQ(s.copies()[0].node->op, "ScatterND");
  EXPECT_EQ(s.copies()[0].units.size(), 2u);
  expect_reference_outputs(*m.graph, s, paper_figure6_inputs(*m.graph));
}

TEST(Greedy, Type1TakesOnlyTypeIOptions) {
  Model m = unfused(paper_figure6_graph());
  Strategy s = choose_strategy(m.kg, {StrategyKind::type1, {"k_cache"}}, AnalyticCostModel());
  int taken = 0;
  for (int o : s.chosen)
    if (o >= 0) {
      EXPECT_EQ(s.vtog->options[size_t(o)].type, Profitability::type1);
      ++taken;
    }
  EXPECT_GT(taken, 0);
  expect_reference_outputs(*m.graph, s, paper_figure6_inputs(*m.graph));
}

TEST(Greedy, NoneTakesNothing) {
  Model m = unfused(paper_figure6_graph());
  Strategy s = choose_strategy(m.kg, {StrategyKind::none, {"k_cache"}}, AnalyticCostModel());
  EXPECT_TRUE(s.virtual_values().empty());
  EXPECT_DOUBLE_EQ(s.latency, s.latency_none);
  EXPECT_EQ(parse_strategy_kind("all-type-1"), StrategyKind::type1);
  EXPECT_FALSE(parse_strategy_kind("best"));
}

TEST(Greedy, Deterministic) {
  Graph g = synthetic_graph(12);
  KernelGraph kg = unfused_kernel_graph(g);
  std::string first = print_strategy(choose_strategy(kg, {}, AnalyticCostModel()));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(print_strategy(choose_strategy(kg, {}, AnalyticCostModel())), first);
}

// The synthetic block: every copy goes, and executing the strategy gives the reference's bits.
TEST(Greedy, SyntheticBlocksExecuteToTheReference) {
  Graph g = synthetic_graph(3);
  KernelGraph kg = unfused_kernel_graph(g);
  for (StrategyKind k : {StrategyKind::none, StrategyKind::type1, StrategyKind::greedy}) {
    Strategy s = choose_strategy(kg, {k, {}}, AnalyticCostModel());
    if (k == StrategyKind::greedy) {
      EXPECT_TRUE(s.copies().empty()) << print_strategy(s);
    }
    expect_reference_outputs(g, s, complete_inputs(g, {}));
  }
}

// A slower launch makes more copies worth removing, never fewer; a model where launches and
// memory are free makes nothing worth it.
TEST(Greedy, FollowsTheCostModel) {
  Graph g = synthetic_graph(2);
  KernelGraph kg = unfused_kernel_graph(g);
  AnalyticParams free_params;
  free_params.launch = 0;
  free_params.bandwidth = 1e30;
  free_params.probe = 0;
  Strategy nothing = choose_strategy(kg, {}, AnalyticCostModel(free_params));
  EXPECT_TRUE(nothing.virtual_values().empty());
  Strategy some = choose_strategy(kg, {}, AnalyticCostModel());
  EXPECT_FALSE(some.virtual_values().empty());
}

// Peak memory as a constraint with slack: a made-up peak that falls with the first virtual
// tensor and rises by 20 with every later one. Without slack nothing after the first move is
// taken; with slack the peak may rise up to (1 + slack) times the lowest seen, never above
// everything physical, and each move held back would have gone past that.
TEST(Greedy, PeakSlackBoundsTheRise) {
  Graph g = synthetic_graph(3);
  KernelGraph kg = unfused_kernel_graph(g);
  auto virtual_count = [](const std::vector<int>& choice) {
    return int64_t(std::count_if(choice.begin(), choice.end(), [](int o) { return o >= 0; }));
  };
  auto peak = [&](const std::vector<int>& choice) {
    const int64_t v = virtual_count(choice);
    return v == 0 ? int64_t(1000) : 700 + 20 * (v - 1);
  };
  auto chosen_count = [&](double slack) {
    StrategyOptions o;
    o.peak_bytes = [&](const Vtog&, const CandidateStorage& c) { return peak(c.choice); };
    o.peak_slack = slack;
    Strategy s = choose_strategy(kg, o, AnalyticCostModel());
    EXPECT_LE(peak(s.chosen), 1000) << "slack " << slack;
    EXPECT_FALSE(s.held_back.empty()) << "slack " << slack;
    for (const HeldBack& h : s.held_back) {
      const int64_t allowed =
          std::min<int64_t>(1000, h.peak_before + int64_t(double(h.peak_before) * slack));
      EXPECT_GT(h.peak_after, allowed) << "slack " << slack;
    }
    return virtual_count(s.chosen);
  };
  const int64_t strict = chosen_count(0), some = chosen_count(0.1), more = chosen_count(0.3);
  EXPECT_LT(strict, some);
  EXPECT_LT(some, more);
}

} // namespace
} // namespace vtc::testing
