// Internal interface between the expression constructors (index_expr.cpp) and the simplifier's
// rule tables (simplify_rules.cpp). Not for use outside src/mapping.
#pragma once

#include <utility>
#include <vector>

#include "mapping/index_expr.h"

namespace vtc::simplify {

// A sum in construction: c + Σ coeff·atom (atoms are var, floordiv, mod or load nodes).
struct Linear {
  int64_t c = 0;
  std::vector<std::pair<int64_t, const ExprNode*>> terms;
};

Linear linear(IndexExpr e);
// Canonicalises (orders atoms, merges like atoms, drops zeros), applies the sum rules until
// none fires, and interns the result.
IndexExpr build(Linear l);

// Rule tables: the first rule that fires rewrites the expression; a null result means none
// fired and the caller interns the plain node.
IndexExpr rewrite_floordiv(IndexExpr x, int64_t c);
IndexExpr rewrite_mod(IndexExpr x, int64_t c);
// Applies one sum rule to `l` (already canonical); false when none fires.
bool rewrite_sum(Linear& l);

// Plain nodes, no rewriting (used by the constructors once no rule fires).
IndexExpr intern_floordiv(IndexExpr x, int64_t c);
IndexExpr intern_mod(IndexExpr x, int64_t c);

} // namespace vtc::simplify
