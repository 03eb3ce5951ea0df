// Tests of load_terms (src/mapping/index_expr.h), the index loads the cost model charges a
// piece: worked examples, and a property test on random chains of data-movement ops, Gathers
// and Scatters among them: the terms of each piece's index expressions are the distinct
// `load(...)` texts of their printed form, and there are none without a Gather or Scatter.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "gen_ops.h"
#include "mapping/index_expr.h"

namespace vtc::test {
namespace {

constexpr int kChains = 300;

std::vector<std::string> texts(const std::vector<IndexExpr>& es) {
  std::vector<std::string> out;
  for (IndexExpr e : es)
    out.push_back(to_string(e));
  return out;
}

TEST(LoadTerms, EachDistinctTermOnceNestedOnesIncluded) {
  IndexExpr i = IndexExpr::var(0, 4), j = IndexExpr::var(1, 3);
  const Base* idx = named_base("idx", {4, 2});
  const Base* pos = named_base("pos", {3}, Interval{0, 3});
  IndexExpr l0 = IndexExpr::load(idx, {i, IndexExpr::constant(0)});
  IndexExpr l1 = IndexExpr::load(idx, {i, IndexExpr::constant(1)});
  EXPECT_TRUE(load_terms(std::vector<IndexExpr>{i * 2, j + 1}).empty());
  EXPECT_TRUE(load_terms(std::vector<IndexExpr>{}).empty());
  EXPECT_EQ(texts(load_terms(std::vector<IndexExpr>{l0, l1 * 3 + j})),
            (std::vector<std::string>{"load(idx, i0, 0)", "load(idx, i0, 1)"}));
  // The same term in two dimensions, or twice in one, is one load.
  EXPECT_EQ(load_terms(std::vector<IndexExpr>{l0, floordiv(l0, 2), mod(l0 + j, 5)}).size(), 1u);
  // A load in the indices of another: both.
  IndexExpr inner = IndexExpr::load(pos, {j});
  IndexExpr outer = IndexExpr::load(idx, {inner, IndexExpr::constant(1)});
  EXPECT_EQ(texts(load_terms(std::vector<IndexExpr>{outer * 2 + inner})),
            (std::vector<std::string>{"load(idx, load(pos, i1), 1)", "load(pos, i1)"}));
  // Absent expressions are skipped.
  EXPECT_EQ(load_terms(std::vector<IndexExpr>{IndexExpr(), l0}).size(), 1u);
}

// The distinct load terms of `exprs` read off their printed form: each "load(" with the text
// up to its matching parenthesis.
std::set<std::string> printed_loads(const std::vector<IndexExpr>& exprs) {
  std::set<std::string> out;
  for (IndexExpr e : exprs) {
    std::string s = to_string(e);
    for (size_t at = s.find("load("); at != std::string::npos; at = s.find("load(", at + 1)) {
      size_t end = at + 4;
      for (int depth = 0; end < s.size(); ++end)
        if (s[end] == '(')
          ++depth;
        else if (s[end] == ')' && --depth == 0)
          break;
      out.insert(s.substr(at, end - at + 1));
    }
  }
  return out;
}

TEST(LoadTermsProperty, TermsAreThePrintedLoadsOfEachPiece) {
  // Gathers and scatters (indices at run time or constant) among views, so that composed
  // chains have pieces with no load, one, several, and loads nested in loads.
  const std::vector<std::string> ops = {"Gather",  "GatherND",  "GatherElements", "ScatterND",
                                        "Reshape", "Transpose", "Slice",          "Concat",
                                        "Expand",  "Identity"};
  for (const std::string& op : ops)
    ASSERT_NE(std::find(generated_ops().begin(), generated_ops().end(), op), generated_ops().end())
        << op;
  int none = 0, one = 0, several = 0, nested = 0, unrepresentable = 0;
  for (int k = 0; k < kChains; ++k) {
    Builder b(53000 + uint64_t(k));
    Value* x0 = b.input(random_shape(b, 1, 4, 5));
    std::vector<ChainStep> steps = random_chain(b, x0, false, int(b.uniform(1, 3)), ops);
    ASSERT_FALSE(steps.empty());
    Result<Mapping> m = compose_read_chain(steps);
    if (!m.ok()) {
      ++unrepresentable;
      continue;
    }
    SCOPED_TRACE("chain " + std::to_string(k) + "\n" + to_string(*m));
    bool indexed = std::any_of(steps.begin(), steps.end(), [](const ChainStep& s) {
      return s.node->op.starts_with("Gather") || s.node->op.starts_with("Scatter");
    });
    for (const Piece& p : m->pieces) {
      std::vector<IndexExpr> terms = load_terms(p.index);
      std::set<std::string> got;
      for (IndexExpr t : terms) {
        ASSERT_EQ(t.kind(), ExprKind::load) << to_string(t);
        got.insert(to_string(t));
      }
      ASSERT_EQ(got.size(), terms.size()) << "a term found twice";
      ASSERT_EQ(got, printed_loads(p.index)) << to_string(p);
      bool any =
          std::any_of(p.index.begin(), p.index.end(), [](IndexExpr e) { return e.has_load(); });
      ASSERT_EQ(!terms.empty(), any) << to_string(p);
      if (!indexed) ASSERT_TRUE(terms.empty()) << "loads without a Gather or Scatter";
      if (terms.empty())
        ++none;
      else if (terms.size() == 1)
        ++one;
      else
        ++several;
      for (IndexExpr t : terms)
        if (t.node()->has_load && std::any_of(t.node()->ops.begin(), t.node()->ops.end(),
                                              [](const ExprNode* o) { return o->has_load; })) {
          ++nested;
          break;
        }
    }
  }
  std::printf("[ property ] pieces with no load %d, one %d, several %d, nested %d; %d chains not "
              "one mapping\n",
              none, one, several, nested, unrepresentable);
  EXPECT_GT(none, 0);
  EXPECT_GT(one, 0);
  EXPECT_GT(several, 0);
  EXPECT_GT(nested, 0);
}

} // namespace
} // namespace vtc::test
