// The VTOG of the paper's figure 6 graph (Split, Reshape, ScatterND into a K cache): the edges
// the rules give in both directions with their types, the conflict set of figure 7, the copy
// units of each node and the schedule with index producers hoisted.
#include <gtest/gtest.h>

#include "support.h"
#include "vtc/error.h"

namespace vtc::testing {
namespace {

TEST(Vtog, PaperFigure6Edges) {
  Model m = unfused(paper_figure6_graph());
  Vtog g = build_vtog(m.kg, {{"k_cache"}});
  // Split: b (and q, v) virtual of a, or a virtual of {q, b, v}; Reshape: c of b or b of c;
  // ScatterND: d of {c, K cache} (updates overlaid), K cache or c written into d, d in place.
  std::vector<std::string> expected = {
      "q -> a read Type I",
      "b -> a read Type I",
      "v -> a read Type I",
      "a -> q write partially contiguous",
      "a -> b write partially contiguous",
      "a -> v write partially contiguous",
      "c -> b read Type I",
      "b -> c write Type I",
      "d -> c read partially contiguous",
      "d -> k_cache read Type I",
      "k_cache -> d write Type I",
      "c -> d write partially contiguous",
      "d -> k_cache in place Type I",
  };
  EXPECT_EQ(edge_lines(g), expected);
  EXPECT_EQ(g.options.size(), 10u);
}

TEST(Vtog, PaperFigure7Conflicts) {
  Model m = unfused(paper_figure6_graph());
  Vtog g = build_vtog(m.kg, {{"k_cache"}});
  std::vector<std::string> conflicts;
  for (auto [a, b] : g.conflicts)
    conflicts.push_back(g.edge_name(a) + " x " + g.edge_name(b));
  // c cannot be virtual of both b (hence a) and d; the write edges of a onto q, b and v come
  // from one mapping over disjoint guards and coexist.
  std::vector<std::string> expected = {
      "b -> a x b -> c",
      "c -> b x c -> d",
      "d -> c x d -> k_cache",
      "d -> k_cache x d -> k_cache",
  };
  EXPECT_EQ(conflicts, expected);
  int a_q = find_edge(g, "a", "q", OptionKind::write),
      a_b = find_edge(g, "a", "b", OptionKind::write);
  for (auto [x, y] : g.conflicts)
    EXPECT_FALSE((x == a_q && y == a_b) || (x == a_b && y == a_q));
}

TEST(Vtog, UnitsSplitTheCopyWork) {
  Model m = unfused(paper_figure6_graph());
  Vtog g = build_vtog(m.kg);
  const VtogMovement& split = g.movement[0];
  ASSERT_EQ(split.units.size(), 3u); // one per output
  for (int u : split.units) {
    EXPECT_DOUBLE_EQ(g.units[size_t(u)].read_fraction, 1.0 / 3);
    EXPECT_EQ(g.units[size_t(u)].bytes, 2 * 64 * 4);
  }
  const VtogMovement& scatter = g.movement[2];
  ASSERT_EQ(scatter.units.size(), 2u); // the clone of the cache, then the updates
  const VtogUnit& clone = g.units[size_t(scatter.units[0])];
  const VtogUnit& updates = g.units[size_t(scatter.units[1])];
  EXPECT_EQ(clone.bytes, 2 * 4 * 32 * 16 * 4);
  EXPECT_EQ(updates.bytes, 2 * 4 * 16 * 4 + 4 * 3 * 8);
  ASSERT_TRUE(updates.scatter.has_value());
  // The in-place option realizes only the clone; the updates' write needs it.
  int in_place = g.edges[size_t(find_edge(g, "d", "k_cache", OptionKind::in_place))].option;
  EXPECT_EQ(g.options[size_t(in_place)].units, std::vector<int>{scatter.units[0]});
  int c_d = g.edges[size_t(find_edge(g, "c", "d", OptionKind::write))].option;
  EXPECT_EQ(g.options[size_t(c_d)].requires_unit, scatter.units[0]);
  EXPECT_TRUE(g.tensors[size_t(g.tensor_of(m.graph->find_value("idx")))].index);
}

TEST(Vtog, DonatedNameMustBeAnInput) {
  Model m = unfused(paper_figure6_graph());
  EXPECT_THROW(build_vtog(m.kg, {{"c"}}), vtc::Error);
  EXPECT_THROW(build_vtog(m.kg, {{"nonexistent"}}), vtc::Error);
}

// Indices computed late in graph order (after the kernel producing the updates) are hoisted,
// so a kernel writing through the scatter's mapping finds them computed.
TEST(Vtog, IndexProducersAreHoisted) {
  GraphMaker mk;
  Value* x = mk.input("x", DType::f32, {1, 4, 1, 16});
  Value* cache = mk.input("cache", DType::f32, {1, 4, 8, 16});
  Value* rows = mk.input("rows", DType::i64, {4, 3});
  Value* u = mk.op("Sigmoid", "updates", {x});
  Value* idx =
      mk.node("Reshape", "indices", {rows, mk.ints("shape", {1, 4, 1, 3})}, {"idx"})->outputs[0];
  Value* y = mk.node("ScatterND", "scatter", {cache, idx, u}, {"y"})->outputs[0];
  mk.output(y);
  Model m = unfused(mk.finish());
  Vtog g = build_vtog(m.kg);
  int idx_t = g.tensor_of(idx), u_t = g.tensor_of(u);
  EXPECT_TRUE(g.tensors[size_t(idx_t)].index);
  EXPECT_LT(g.tensors[size_t(idx_t)].producer_step, g.tensors[size_t(u_t)].producer_step);
  EXPECT_NE(print_vtog(g).find("step 0: move Reshape 'indices'"), std::string::npos);
}

} // namespace
} // namespace vtc::testing
