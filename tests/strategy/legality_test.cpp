// Legality of points-to graphs: the three strategies of the paper's figure 9 are legal (and
// execute to the reference's outputs, bit for bit), and each rule of DESIGN.md rejects an edge
// set that breaks it, with a reason that names it.
#include <gtest/gtest.h>

#include "strategy/assignment.h"
#include "support.h"

namespace vtc::testing {
namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v)
    s += x + "\n";
  return s;
}

struct Figure6 {
  Model m = unfused(paper_figure6_graph());
  std::shared_ptr<const Vtog> g;
  AnalyticCostModel model;
  explicit Figure6(std::vector<std::string> donated = {"k_cache"}) {
    g = std::make_shared<const Vtog>(build_vtog(m.kg, {donated}));
  }
  int edge(const std::string& from, const std::string& to, OptionKind k) const {
    return find_edge(*g, from, to, k);
  }
  std::vector<int> split_write() const {
    return {edge("a", "q", OptionKind::write), edge("a", "b", OptionKind::write),
            edge("a", "v", OptionKind::write)};
  }
  PointsToResult points_to(const std::vector<int>& edges) const {
    return points_to_from_edges(g, edges, model);
  }
  const Value* value(const std::string& name) const { return m.graph->find_value(name); }
};

void expect_reference_outputs(const Figure6& f, const Strategy& s) {
  TensorMap inputs = paper_figure6_inputs(*f.m.graph);
  TensorMap expected = run_reference(*f.m.graph, inputs);
  TensorMap actual = simulate(s, inputs);
  for (auto& [name, t] : expected)
    EXPECT_TRUE(t.bitwise_equal(actual.at(name))) << name;
}

std::vector<std::string> bases(const Strategy& s, const Value* v) {
  std::vector<std::string> out;
  const Mapping* m = s.operand(v).mapping;
  if (!m) return out;
  for (const Piece& p : m->pieces)
    if (p.base && std::find(out.begin(), out.end(), p.base->name) == out.end())
      out.push_back(p.base->name);
  std::sort(out.begin(), out.end());
  return out;
}

// Strategy 3: no edges, everything physical.
TEST(Legality, PaperStrategy3AllPhysical) {
  Figure6 f;
  PointsToResult r = f.points_to({});
  ASSERT_TRUE(r.strategy) << joined(r.reasons);
  EXPECT_TRUE(r.strategy->virtual_values().empty());
  EXPECT_EQ(r.strategy->copies().size(), 3u);
  expect_reference_outputs(f, *r.strategy);
}

// Strategy 2: b and the K cache physical; a and c virtual of b, d of the K cache.
TEST(Legality, PaperStrategy2) {
  Figure6 f;
  std::vector<int> edges = f.split_write();
  edges.push_back(f.edge("c", "b", OptionKind::read));
  edges.push_back(f.edge("d", "k_cache", OptionKind::in_place));
  PointsToResult r = f.points_to(edges);
  ASSERT_TRUE(r.strategy) << joined(r.reasons);
  const Strategy& s = *r.strategy;
  EXPECT_FALSE(s.is_virtual(f.value("b")));
  EXPECT_EQ(bases(s, f.value("a")), (std::vector<std::string>{"b", "q", "v"}));
  EXPECT_EQ(bases(s, f.value("c")), std::vector<std::string>{"b"});
  EXPECT_EQ(bases(s, f.value("d")), std::vector<std::string>{"k_cache"});
  // The scatter still writes the updates, now straight into the K cache.
  ASSERT_EQ(s.copies().size(), 1u);
  EXPECT_EQ(s.copies()[0].units, (std::vector<std::pair<int, int>>{{2, 0}}));
  EXPECT_EQ(s.aliases().size(), 1u);
  expect_reference_outputs(f, s);
}

// Strategy 1: a, b, c and d all virtual of the K cache (a's other parts: q and v).
TEST(Legality, PaperStrategy1) {
  Figure6 f;
  std::vector<int> edges = f.split_write();
  edges.push_back(f.edge("b", "c", OptionKind::write));
  edges.push_back(f.edge("c", "d", OptionKind::write));
  edges.push_back(f.edge("d", "k_cache", OptionKind::in_place));
  PointsToResult r = f.points_to(edges);
  ASSERT_TRUE(r.strategy) << joined(r.reasons);
  const Strategy& s = *r.strategy;
  for (const char* v : {"b", "c", "d"})
    EXPECT_EQ(bases(s, f.value(v)), std::vector<std::string>{"k_cache"}) << v;
  EXPECT_EQ(bases(s, f.value("a")), (std::vector<std::string>{"k_cache", "q", "v"}));
  EXPECT_TRUE(s.copies().empty());
  EXPECT_EQ(s.operand(f.value("x")).physical, true);
  expect_reference_outputs(f, s);
}

void expect_rejected(const PointsToResult& r, const std::string& needle) {
  ASSERT_FALSE(r.strategy) << "accepted, expected a reason containing '" << needle << "'";
  EXPECT_NE(joined(r.reasons).find(needle), std::string::npos) << joined(r.reasons);
}

TEST(Legality, ConflictOneBasePerIndex) {
  Figure6 f;
  expect_rejected(
      f.points_to({f.edge("c", "b", OptionKind::read), f.edge("c", "d", OptionKind::write)}),
      "conflict: edges c -> b and c -> d");
}

TEST(Legality, IncompleteOption) {
  Figure6 f;
  expect_rejected(f.points_to({f.edge("a", "q", OptionKind::write)}),
                  "incomplete: a needs edge a -> b");
}

TEST(Legality, NoCycles) {
  Figure6 f;
  expect_rejected(
      f.points_to({f.edge("b", "c", OptionKind::write), f.edge("c", "b", OptionKind::read)}),
      "cycle: ");
}

TEST(Legality, GraphInputsArePhysical) {
  Figure6 f;
  expect_rejected(f.points_to({f.edge("k_cache", "d", OptionKind::write)}),
                  "graph input k_cache is physical");
}

TEST(Legality, InputsAreReadOnlyUnlessDonated) {
  Figure6 f(std::vector<std::string>{});
  PointsToResult r = f.points_to({f.edge("d", "k_cache", OptionKind::in_place)});
  expect_rejected(r, "would be written into graph input k_cache, which is read-only");
  expect_rejected(r, "graph output d must be physical and contiguous");
}

TEST(Legality, GraphOutputsArePhysical) {
  Figure6 f;
  expect_rejected(
      f.points_to({f.edge("d", "c", OptionKind::read), f.edge("d", "k_cache", OptionKind::read)}),
      "graph output d must be physical and contiguous");
}

TEST(Legality, ScatteredUpdatesNeedTheDataInPlace) {
  Figure6 f;
  expect_rejected(f.points_to({f.edge("c", "d", OptionKind::write)}),
                  "needs ScatterND 'scatter' to update its data in place");
}

// A kernel reads the old K cache after the scatter updated it in place.
TEST(Legality, InPlaceUpdateMustNotClobberALaterReader) {
  GraphMaker mk;
  Value* x = mk.input("x", DType::f32, {1, 4, 1, 16});
  Value* cache = mk.input("cache", DType::f32, {1, 4, 8, 16});
  Value* idx = mk.input("idx", DType::i64, {1, 4, 1, 3});
  Value* u = mk.op("Sigmoid", "updates", {x});
  Value* y = mk.node("ScatterND", "scatter", {cache, idx, u}, {"y"})->outputs[0];
  Node* old = mk.node("ReduceMean", "old_mean", {cache}, {"old"});
  old->attrs["axes"] = std::vector<int64_t>{2};
  mk.output(y);
  mk.output(old->outputs[0]);
  Model m = unfused(mk.finish());
  auto g = std::make_shared<const Vtog>(build_vtog(m.kg, {{"cache"}}));
  AnalyticCostModel model;
  expect_rejected(
      points_to_from_edges(g, {find_edge(*g, "y", "cache", OptionKind::in_place)}, model),
      "ScatterND 'scatter' updates cache in place at step 1, but step 2 still reads cache");
  // The greedy search leaves the cache alone here, and the outputs stay right.
  Strategy s = choose_strategy(m.kg, {StrategyKind::greedy, {"cache"}}, model);
  EXPECT_FALSE(s.is_virtual(y));
  TensorMap in = complete_inputs(*m.graph, {});
  Tensor rows(DType::i64, {1, 4, 1, 3});
  for (int h = 0; h < 4; ++h)
    rows.set_i64(h * 3 + 1, h), rows.set_i64(h * 3 + 2, 7 - h);
  in["idx"] = rows;
  TensorMap expected = run_reference(*m.graph, in), actual = simulate(s, in);
  for (auto& [name, t] : expected)
    EXPECT_TRUE(t.bitwise_equal(actual.at(name))) << name;
}

// The simulator is a real oracle: forcing the clobbering in-place update through (bypassing
// the legality check) changes an output.
TEST(Legality, SimulatorSeesAClobber) {
  GraphMaker mk;
  Value* x = mk.input("x", DType::f32, {1, 4, 1, 16});
  Value* cache = mk.input("cache", DType::f32, {1, 4, 8, 16});
  Value* idx = mk.input("idx", DType::i64, {1, 4, 1, 3});
  Value* y = mk.node("ScatterND", "scatter", {cache, idx, mk.op("Sigmoid", "updates", {x})}, {"y"})
                 ->outputs[0];
  Node* old = mk.node("ReduceMean", "old_mean", {cache}, {"old"});
  old->attrs["axes"] = std::vector<int64_t>{2};
  mk.output(y);
  mk.output(old->outputs[0]);
  Model m = unfused(mk.finish());
  auto g = std::make_shared<const Vtog>(build_vtog(m.kg, {{"cache"}}));
  AnalyticCostModel model;
  Assignment a(*g, model);
  int in_place = g->edges[size_t(find_edge(*g, "y", "cache", OptionKind::in_place))].option;
  EXPECT_FALSE(a.assign({in_place}).empty());
  Strategy forced;
  forced.vtog = g;
  for (size_t t = 0; t < g->tensors.size(); ++t) {
    forced.chosen.push_back(a.choice(int(t)));
    const Composed* c = a.composed(int(t));
    forced.mappings.push_back(c ? std::optional<Mapping>(c->mapping) : std::nullopt);
  }
  TensorMap in = complete_inputs(*m.graph, {});
  Tensor rows(DType::i64, {1, 4, 1, 3});
  for (int h = 0; h < 4; ++h)
    rows.set_i64(h * 3 + 1, h), rows.set_i64(h * 3 + 2, 7 - h);
  in["idx"] = rows;
  TensorMap expected = run_reference(*m.graph, in), actual = simulate(forced, in);
  EXPECT_TRUE(expected.at("y").bitwise_equal(actual.at("y")));
  EXPECT_FALSE(expected.at("old").bitwise_equal(actual.at("old")));
}

// Two updates of one donated cache: only one of them may happen in place, or the first
// result (a graph output) would see the second's updates.
TEST(Legality, TwoInPlaceUpdatesOfOneCache) {
  GraphMaker mk;
  Value* x = mk.input("x", DType::f32, {1, 4, 1, 16});
  Value* cache = mk.input("cache", DType::f32, {1, 4, 8, 16});
  Value* idx = mk.input("idx", DType::i64, {1, 4, 1, 3});
  Value* y1 =
      mk.node("ScatterND", "first", {cache, idx, mk.op("Sigmoid", "u1", {x})}, {"y1"})->outputs[0];
  Value* y2 =
      mk.node("ScatterND", "second", {cache, idx, mk.op("Relu", "u2", {x})}, {"y2"})->outputs[0];
  mk.output(y1);
  mk.output(y2);
  Model m = unfused(mk.finish());
  auto g = std::make_shared<const Vtog>(build_vtog(m.kg, {{"cache"}}));
  AnalyticCostModel model;
  PointsToResult both = points_to_from_edges(g,
                                             {find_edge(*g, "y1", "cache", OptionKind::in_place),
                                              find_edge(*g, "y2", "cache", OptionKind::in_place)},
                                             model);
  // The second scatter keeps the cache as it is at its step, after the first changed it ...
  expect_rejected(
      both, "ScatterND 'first' updates cache in place at step 1, but step 3 still reads cache");
  // ... and the first result, a graph output, would see the second's updates.
  expect_rejected(
      both, "ScatterND 'second' updates cache in place at step 3, but the caller still reads y1");
  Strategy s = choose_strategy(m.kg, {StrategyKind::greedy, {"cache"}}, model);
  EXPECT_EQ(s.aliases().size(), 1u);
  TensorMap in = complete_inputs(*m.graph, {});
  Tensor rows(DType::i64, {1, 4, 1, 3});
  for (int h = 0; h < 4; ++h)
    rows.set_i64(h * 3 + 1, h), rows.set_i64(h * 3 + 2, h + 2);
  in["idx"] = rows;
  TensorMap expected = run_reference(*m.graph, in), actual = simulate(s, in);
  for (auto& [name, t] : expected)
    EXPECT_TRUE(t.bitwise_equal(actual.at(name))) << name;
}

TEST(Legality, ConstantsAreNeverWritten) {
  GraphMaker mk;
  Value* x = mk.input("x", DType::f32, {1, 4, 1, 16});
  Value* idx = mk.input("idx", DType::i64, {1, 4, 1, 3});
  Value* table = mk.floats("table", {1, 4, 8, 16}, 0.5f);
  Value* y = mk.node("ScatterND", "scatter", {table, idx, mk.op("Sigmoid", "updates", {x})}, {"y"})
                 ->outputs[0];
  mk.output(mk.op("Relu", "relu", {y}));
  Model m = unfused(mk.finish());
  auto g = std::make_shared<const Vtog>(build_vtog(m.kg));
  expect_rejected(points_to_from_edges(g, {find_edge(*g, "y", "table", OptionKind::in_place)},
                                       AnalyticCostModel()),
                  "y would be written into constant table");
}

// The scatter's write mapping loads its indices: they must stay physical.
TEST(Legality, IndexTensorsArePhysical) {
  GraphMaker mk;
  Value* x = mk.input("x", DType::f32, {1, 4, 1, 16});
  Value* cache = mk.input("cache", DType::f32, {1, 4, 8, 16});
  Value* rows = mk.input("rows", DType::i64, {4, 3});
  Value* idx =
      mk.node("Reshape", "indices", {rows, mk.ints("shape", {1, 4, 1, 3})}, {"idx"})->outputs[0];
  Value* u = mk.op("Sigmoid", "updates", {x});
  Value* y = mk.node("ScatterND", "scatter", {cache, idx, u}, {"y"})->outputs[0];
  mk.output(y);
  Model m = unfused(mk.finish());
  auto g = std::make_shared<const Vtog>(build_vtog(m.kg, {{"cache"}}));
  std::vector<int> edges = {find_edge(*g, "y", "cache", OptionKind::in_place),
                            find_edge(*g, "updates", "y", OptionKind::write),
                            find_edge(*g, "idx", "rows", OptionKind::read)};
  expect_rejected(points_to_from_edges(g, edges, AnalyticCostModel()),
                  "updates loads indices from idx, which is virtual");
  edges.pop_back();
  EXPECT_TRUE(points_to_from_edges(g, edges, AnalyticCostModel()).strategy);
}

} // namespace
} // namespace vtc::testing
