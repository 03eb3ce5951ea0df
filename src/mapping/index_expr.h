// IndexExpr: the quasi-affine index expressions of virtual-tensor mappings. An expression is
// an integer constant, an index variable (with the half-open range it takes), a sum of scaled
// terms, `x floordiv c` or `x mod c` for a constant c > 0, or `load(t, e...)`, an element of an
// integer tensor known only at run time (Gather/Scatter indices). Expressions are immutable and
// uniqued: structurally equal expressions are the same object, so `==` is a pointer compare.
// They are simplified while they are built (simplify_rules.cpp holds the rule table): a sum is
// kept as constant + Σ coeff·atom with like atoms merged and atoms in a fixed order, so
// `(i*128) floordiv 64` is `i*2` and `(i floordiv 4)*4 + i mod 4` is `i` the moment they exist.
// Because variables carry their range, `i mod 8` with i in [0,8) is `i` as soon as it is built.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mapping/base.h"
#include "mapping/interval.h"

namespace vtc {

enum class ExprKind { constant, var, sum, floordiv, mod, load };

// The uniqued node behind an IndexExpr. Read through IndexExpr's accessors.
struct ExprNode {
  ExprKind kind = ExprKind::constant;
  int64_t value = 0;                // constant: value; var: id; sum: constant term; div/mod: c
  int64_t lo = 0, hi = 0;           // var: half-open range [lo, hi)
  const Base* base = nullptr;       // load: the indexed tensor
  std::vector<const ExprNode*> ops; // sum: atoms; floordiv/mod: {x}; load: indices
  std::vector<int64_t> coeffs;      // sum: one coefficient per atom (never 0)
  // Derived when interned.
  size_t hash = 0;
  Interval range;        // closed bounds of the value over the variables' ranges
  uint64_t var_mask = 0; // bit v set when variable v (< 64) occurs
  bool has_load = false;
  int max_var = -1; // largest variable id that occurs, -1 when none
};

class IndexExpr {
public:
  IndexExpr() = default; // the null expression; only valid as "absent"
  explicit IndexExpr(const ExprNode* n) : n_(n) {}

  static IndexExpr constant(int64_t v);
  // Variable `id` ranging over [lo, hi) (lo < hi).
  static IndexExpr var(int id, int64_t lo, int64_t hi);
  static IndexExpr var(int id, int64_t extent) { return var(id, 0, extent); }
  // t[indices...], one index per dimension of t.
  static IndexExpr load(const Base* t, const std::vector<IndexExpr>& indices);

  bool is_null() const { return n_ == nullptr; }
  const ExprNode* node() const { return n_; }
  ExprKind kind() const { return n_->kind; }
  bool is_constant() const { return n_->kind == ExprKind::constant; }
  int64_t constant_value() const { return n_->value; }    // constant only
  int var_id() const { return int(n_->value); }           // var only
  int64_t divisor() const { return n_->value; }           // floordiv / mod only
  IndexExpr arg() const { return IndexExpr(n_->ops[0]); } // floordiv / mod only
  const Base* load_base() const { return n_->base; }
  // Interval of the value over the ranges of the variables.
  Interval bounds() const { return n_->range; }
  uint64_t var_mask() const { return n_->var_mask; }
  bool has_load() const { return n_->has_load; }
  int max_var() const { return n_->max_var; }
  bool uses_var(int id) const;
  // Single-variable expressions: the variable's id, or -1 (constant, several vars, or a load).
  int single_var() const;

  // constant + Σ coeff·atom view of any expression (an atom is its own single term).
  int64_t sum_constant() const;
  std::vector<std::pair<int64_t, IndexExpr>> sum_terms() const;

  bool operator==(const IndexExpr& o) const { return n_ == o.n_; }
  bool operator!=(const IndexExpr& o) const { return n_ != o.n_; }

private:
  const ExprNode* n_ = nullptr;
};

IndexExpr operator+(IndexExpr a, IndexExpr b);
IndexExpr operator+(IndexExpr a, int64_t c);
IndexExpr operator-(IndexExpr a, IndexExpr b);
IndexExpr operator-(IndexExpr a, int64_t c);
IndexExpr operator-(IndexExpr a);
IndexExpr operator*(IndexExpr a, int64_t c);
inline IndexExpr operator*(int64_t c, IndexExpr a) {
  return a * c;
}
// x floordiv c and x mod c (floor semantics) for c > 0; throws vtc::Error otherwise.
IndexExpr floordiv(IndexExpr x, int64_t c);
IndexExpr mod(IndexExpr x, int64_t c);

// Reads element `index` (row-major multi-index) of base `t`; used to evaluate loads.
using LoadFn = std::function<int64_t(const Base* t, std::span<const int64_t> index)>;

// Value of `e` with variable v set to vars[v]; loads go through `load` (may be empty when `e`
// has no load). Throws vtc::Error when a variable is missing.
int64_t eval(IndexExpr e, std::span<const int64_t> vars, const LoadFn& load = {});

// Replaces variable v by repl[v] wherever v < repl.size() and repl[v] is not null, then
// simplifies (the replacement's ranges replace the old variable's range).
IndexExpr substitute(IndexExpr e, std::span<const IndexExpr> repl);

// The distinct load(...) terms of `roots` (null ones are skipped): each once however often it
// occurs, since equal terms are one node; loads inside the indices of a load included; in the
// order a depth-first walk meets them.
std::vector<IndexExpr> load_terms(std::span<const IndexExpr> roots);

// Stable text form: `i0*4096 + (i1 floordiv 4)*128 + i3 + 4096`, `load(idx, i0, 2) mod 16`.
using VarNamer = std::function<std::string(int id)>;
std::string to_string(IndexExpr e, const VarNamer& name = {});

// The fixed total order of atoms used for canonical sums (and for printing): variables by id,
// then floordiv, mod and load atoms by structure. Returns <0, 0, >0.
int compare(const ExprNode* a, const ExprNode* b);

} // namespace vtc
