// The explain report, its per-node records, and the Graphviz points-to graph.
#include <algorithm>
#include <gtest/gtest.h>

#include "strategy/explain.h"
#include "support.h"

namespace vtc::testing {
namespace {

TEST(Explain, PaperFigure6Report) {
  Model m = unfused(paper_figure6_graph());
  Strategy s = choose_strategy(m.kg, {StrategyKind::greedy, {"k_cache"}}, AnalyticCostModel());
  std::string text = explain_text(s);
  EXPECT_NE(text.find("Split 'split'"), std::string::npos) << text;
  EXPECT_NE(text.find("virtual write side (in place)"), std::string::npos) << text;
  // Copies removed: the Split (3 x 512 B), the Reshape (512 B), the cache clone (2 x 8 KiB) and
  // the updates (512 B and 96 B of indices); no longer allocated: a, b, c and d.
  int64_t copies = 3 * 512 + 512 + 2 * 8192 + 512 + 96;
  int64_t allocated = 768 + 256 + 256 + 8192;
  std::string totals = "explain: 3 data-movement ops, 3 eliminated, " + std::to_string(copies) +
                       " bytes of copies removed, " + std::to_string(allocated) +
                       " bytes no longer allocated\n";
  EXPECT_TRUE(text.ends_with(totals)) << text;
  ExplainTotals t = explain_totals(s);
  EXPECT_EQ(t.eliminated, 3);
}

TEST(Explain, MovementRecordsAreTheReportAsData) {
  Model m = unfused(paper_figure6_graph());
  Strategy greedy = choose_strategy(m.kg, {StrategyKind::greedy, {"k_cache"}}, AnalyticCostModel());
  std::vector<MovementExplanation> moves = explain_movements(greedy);
  ASSERT_EQ(moves.size(), 3u);
  std::string text = explain_text(greedy);
  for (const MovementExplanation& e : moves) {
    EXPECT_TRUE(e.eliminated) << e.node->describe();
    EXPECT_NE(e.became, "physical") << e.node->describe();
    EXPECT_NE(text.find(e.node->describe()), std::string::npos) << text;
  }
  auto split = std::find_if(moves.begin(), moves.end(),
                            [](const MovementExplanation& e) { return e.node->op == "Split"; });
  ASSERT_NE(split, moves.end());
  EXPECT_EQ(split->node->name, "split");
  auto scatter = std::find_if(moves.begin(), moves.end(), [](const MovementExplanation& e) {
    return e.node->op == "ScatterND";
  });
  ASSERT_NE(scatter, moves.end());
  EXPECT_EQ(scatter->became, "virtual write side (in place)");
  EXPECT_GT(scatter->saving, 0);

  Strategy none = choose_strategy(m.kg, {StrategyKind::none, {}}, AnalyticCostModel());
  for (const MovementExplanation& e : explain_movements(none)) {
    EXPECT_EQ(e.became, "physical");
    EXPECT_FALSE(e.eliminated);
    EXPECT_EQ(e.mapping_type, "-");
    EXPECT_EQ(e.saving, 0);
  }
}

TEST(Explain, NoneReportsEverythingPhysical) {
  Model m = unfused(paper_figure6_graph());
  Strategy s = choose_strategy(m.kg, {StrategyKind::none, {}}, AnalyticCostModel());
  std::string text = explain_text(s);
  EXPECT_TRUE(text.ends_with(
      "explain: 3 data-movement ops, 0 eliminated, 0 bytes of copies removed, 0 bytes no longer "
      "allocated\n"))
      << text;
}

TEST(Explain, DotDrawsPhysicalAndVirtualTensorsApart) {
  Model m = unfused(paper_figure6_graph());
  Strategy s = choose_strategy(m.kg, {StrategyKind::greedy, {"k_cache"}}, AnalyticCostModel());
  std::string dot = points_to_dot(s);
  const Vtog& g = *s.vtog;
  auto node_line = [&](const std::string& name) {
    std::string id = "  t" + std::to_string(g.tensor_of(m.graph->find_value(name))) + " [";
    size_t at = dot.find(id);
    return at == std::string::npos ? std::string() : dot.substr(at, dot.find('\n', at) - at);
  };
  EXPECT_NE(node_line("k_cache").find("shape=box"), std::string::npos) << dot;
  EXPECT_NE(node_line("c").find("style=dashed"), std::string::npos) << dot;
  std::string edge = "  t" + std::to_string(g.tensor_of(m.graph->find_value("d"))) + " -> t" +
                     std::to_string(g.tensor_of(m.graph->find_value("k_cache"))) +
                     " [label=\"ScatterND in place\\nType I\"];";
  EXPECT_NE(dot.find(edge), std::string::npos) << dot;
  EXPECT_TRUE(dot.starts_with("digraph points_to {"));
}

TEST(Explain, PrintStrategyListsCopiesAndAliases) {
  Model m = unfused(paper_figure6_graph());
  Strategy s = choose_strategy(m.kg, {StrategyKind::greedy, {"k_cache"}}, AnalyticCostModel());
  std::string text = print_strategy(s);
  EXPECT_NE(text.find("strategy greedy: 3 data-movement ops, 3 eliminated"), std::string::npos)
      << text;
  EXPECT_NE(text.find("virtual  %c f32[1,4,1,16] <- ScatterND 'scatter' write"), std::string::npos)
      << text;
  EXPECT_NE(text.find("alias    %d = donated %k_cache"), std::string::npos) << text;
}

} // namespace
} // namespace vtc::testing
