// Construction, uniquing, evaluation, substitution and printing of index expressions. The
// algebra itself (which rewrites happen when a floordiv, mod or sum is built) is the rule table
// in simplify_rules.cpp; this file only canonicalises sums and interns nodes.
#include "mapping/index_expr.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "mapping/simplify_rules.h"
#include "vtc/error.h"

namespace vtc {
namespace {

size_t hash_node(const ExprNode& n) {
  size_t h = size_t(n.kind) * 0x9e3779b97f4a7c15ULL;
  auto mix = [&](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(uint64_t(n.value));
  mix(uint64_t(n.lo));
  mix(uint64_t(n.hi));
  mix(uint64_t(reinterpret_cast<uintptr_t>(n.base)));
  for (const ExprNode* o : n.ops)
    mix(uint64_t(reinterpret_cast<uintptr_t>(o)));
  for (int64_t c : n.coeffs)
    mix(uint64_t(c));
  return h;
}

struct NodeHash {
  size_t operator()(const ExprNode* n) const { return n->hash; }
};
struct NodeEq {
  bool operator()(const ExprNode* a, const ExprNode* b) const {
    return a->kind == b->kind && a->value == b->value && a->lo == b->lo && a->hi == b->hi &&
           a->base == b->base && a->ops == b->ops && a->coeffs == b->coeffs;
  }
};

// Fills the derived fields (range, variables, loads) from the children.
void derive(ExprNode& n) {
  for (const ExprNode* o : n.ops) {
    n.var_mask |= o->var_mask;
    n.has_load = n.has_load || o->has_load;
    n.max_var = std::max(n.max_var, o->max_var);
  }
  switch (n.kind) {
  case ExprKind::constant:
    n.range = Interval::point(n.value);
    break;
  case ExprKind::var:
    n.range = {n.lo, n.hi - 1};
    if (n.value < 64) n.var_mask |= uint64_t(1) << n.value;
    n.max_var = std::max<int>(n.max_var, int(n.value));
    break;
  case ExprKind::sum:
    n.range = Interval::point(n.value);
    for (size_t k = 0; k < n.ops.size(); ++k)
      n.range = n.range + n.ops[k]->range * n.coeffs[k];
    break;
  case ExprKind::floordiv:
    n.range = vtc::floordiv(n.ops[0]->range, n.value);
    break;
  case ExprKind::mod:
    n.range = vtc::mod(n.ops[0]->range, n.value);
    break;
  case ExprKind::load:
    n.has_load = true;
    n.range = n.base->values ? *n.base->values : Interval::unbounded();
    break;
  }
}

IndexExpr intern(ExprNode&& proto) {
  static std::mutex mu;
  static std::unordered_set<const ExprNode*, NodeHash, NodeEq> table;
  static std::vector<std::unique_ptr<ExprNode>> arena;
  proto.hash = hash_node(proto);
  std::lock_guard<std::mutex> lock(mu);
  auto it = table.find(&proto);
  if (it != table.end()) return IndexExpr(*it);
  auto owned = std::make_unique<ExprNode>(std::move(proto));
  derive(*owned);
  const ExprNode* p = owned.get();
  arena.push_back(std::move(owned));
  table.insert(p);
  return IndexExpr(p);
}

int rank_of(ExprKind k) {
  switch (k) {
  case ExprKind::constant:
    return 0;
  case ExprKind::var:
    return 1;
  case ExprKind::sum:
    return 2;
  case ExprKind::floordiv:
    return 3;
  case ExprKind::mod:
    return 4;
  case ExprKind::load:
    return 5;
  }
  return 6;
}

int cmp(int64_t a, int64_t b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

} // namespace

int compare(const ExprNode* a, const ExprNode* b) {
  if (a == b) return 0;
  if (int r = cmp(rank_of(a->kind), rank_of(b->kind))) return r;
  switch (a->kind) {
  case ExprKind::constant:
    return cmp(a->value, b->value);
  case ExprKind::var:
    if (int r = cmp(a->value, b->value)) return r;
    if (int r = cmp(a->lo, b->lo)) return r;
    return cmp(a->hi, b->hi);
  case ExprKind::floordiv:
  case ExprKind::mod:
    if (int r = compare(a->ops[0], b->ops[0])) return r;
    return cmp(a->value, b->value);
  case ExprKind::sum:
  case ExprKind::load:
    if (a->kind == ExprKind::load && a->base != b->base)
      return a->base->name < b->base->name ? -1 : 1;
    if (int r = cmp(int64_t(a->ops.size()), int64_t(b->ops.size()))) return r;
    for (size_t k = 0; k < a->ops.size(); ++k) {
      if (int r = compare(a->ops[k], b->ops[k])) return r;
      if (a->kind == ExprKind::sum)
        if (int r = cmp(a->coeffs[k], b->coeffs[k])) return r;
    }
    return cmp(a->value, b->value);
  }
  return 0;
}

namespace simplify {

Linear linear(IndexExpr e) {
  Linear l;
  const ExprNode* n = e.node();
  if (n->kind == ExprKind::constant) {
    l.c = n->value;
  } else if (n->kind == ExprKind::sum) {
    l.c = n->value;
    for (size_t k = 0; k < n->ops.size(); ++k)
      l.terms.emplace_back(n->coeffs[k], n->ops[k]);
  } else {
    l.terms.emplace_back(1, n);
  }
  return l;
}

// Orders atoms and merges like atoms: a·x + b·x = (a+b)·x; 0·x = 0.
static void canonicalise(Linear& l) {
  std::sort(l.terms.begin(), l.terms.end(),
            [](const auto& x, const auto& y) { return compare(x.second, y.second) < 0; });
  size_t out = 0;
  for (size_t k = 0; k < l.terms.size(); ++k) {
    if (out > 0 && l.terms[out - 1].second == l.terms[k].second) {
      l.terms[out - 1].first += l.terms[k].first;
    } else {
      l.terms[out++] = l.terms[k];
    }
  }
  l.terms.resize(out);
  std::erase_if(l.terms, [](const auto& t) { return t.first == 0; });
}

IndexExpr build(Linear l) {
  canonicalise(l);
  for (int guard = 0; rewrite_sum(l); ++guard) {
    VTC_CHECK(guard < 1000) << "index expression simplifier did not terminate";
    canonicalise(l);
  }
  if (l.terms.empty()) return IndexExpr::constant(l.c);
  if (l.terms.size() == 1 && l.c == 0 && l.terms[0].first == 1) return IndexExpr(l.terms[0].second);
  ExprNode n;
  n.kind = ExprKind::sum;
  n.value = l.c;
  for (auto& [coeff, atom] : l.terms) {
    n.coeffs.push_back(coeff);
    n.ops.push_back(atom);
  }
  return intern(std::move(n));
}

IndexExpr intern_floordiv(IndexExpr x, int64_t c) {
  ExprNode n;
  n.kind = ExprKind::floordiv;
  n.value = c;
  n.ops = {x.node()};
  return intern(std::move(n));
}

IndexExpr intern_mod(IndexExpr x, int64_t c) {
  ExprNode n;
  n.kind = ExprKind::mod;
  n.value = c;
  n.ops = {x.node()};
  return intern(std::move(n));
}

} // namespace simplify

IndexExpr IndexExpr::constant(int64_t v) {
  ExprNode n;
  n.kind = ExprKind::constant;
  n.value = v;
  return intern(std::move(n));
}

IndexExpr IndexExpr::var(int id, int64_t lo, int64_t hi) {
  VTC_CHECK(id >= 0 && lo < hi) << "index variable i" << id << " with empty range [" << lo << ", "
                                << hi << ")";
  if (hi - lo == 1) return constant(lo);
  ExprNode n;
  n.kind = ExprKind::var;
  n.value = id;
  n.lo = lo;
  n.hi = hi;
  return intern(std::move(n));
}

IndexExpr IndexExpr::load(const Base* t, const std::vector<IndexExpr>& indices) {
  VTC_CHECK(t && int(indices.size()) == t->rank())
      << "load from " << (t ? t->name : "null") << " with " << indices.size() << " indices";
  ExprNode n;
  n.kind = ExprKind::load;
  n.base = t;
  for (IndexExpr e : indices)
    n.ops.push_back(e.node());
  return intern(std::move(n));
}

bool IndexExpr::uses_var(int id) const {
  if (id < 64) return (n_->var_mask >> id) & 1;
  if (n_->kind == ExprKind::var) return n_->value == id;
  for (const ExprNode* o : n_->ops)
    if (IndexExpr(o).uses_var(id)) return true;
  return false;
}

int IndexExpr::single_var() const {
  if (n_->has_load || n_->max_var < 0 || n_->max_var >= 64) return -1;
  uint64_t m = n_->var_mask;
  return (m & (m - 1)) == 0 ? n_->max_var : -1;
}

int64_t IndexExpr::sum_constant() const {
  return simplify::linear(*this).c;
}

std::vector<std::pair<int64_t, IndexExpr>> IndexExpr::sum_terms() const {
  std::vector<std::pair<int64_t, IndexExpr>> out;
  for (auto& [c, a] : simplify::linear(*this).terms)
    out.emplace_back(c, IndexExpr(a));
  return out;
}

IndexExpr operator+(IndexExpr a, IndexExpr b) {
  simplify::Linear l = simplify::linear(a), r = simplify::linear(b);
  VTC_CHECK(!__builtin_add_overflow(l.c, r.c, &l.c)) << "index expression constant overflows";
  l.terms.insert(l.terms.end(), r.terms.begin(), r.terms.end());
  return simplify::build(std::move(l));
}

IndexExpr operator+(IndexExpr a, int64_t c) {
  return a + IndexExpr::constant(c);
}
IndexExpr operator-(IndexExpr a, IndexExpr b) {
  return a + b * -1;
}
IndexExpr operator-(IndexExpr a, int64_t c) {
  return a + IndexExpr::constant(-c);
}
IndexExpr operator-(IndexExpr a) {
  return a * -1;
}

IndexExpr operator*(IndexExpr a, int64_t c) {
  if (c == 0) return IndexExpr::constant(0);
  if (c == 1) return a;
  simplify::Linear l = simplify::linear(a);
  VTC_CHECK(!__builtin_mul_overflow(l.c, c, &l.c)) << "index expression constant overflows";
  for (auto& t : l.terms)
    VTC_CHECK(!__builtin_mul_overflow(t.first, c, &t.first))
        << "index expression coefficient overflows";
  return simplify::build(std::move(l));
}

IndexExpr floordiv(IndexExpr x, int64_t c) {
  VTC_CHECK(c > 0) << "floordiv by " << c << " (must be positive) in " << to_string(x);
  IndexExpr r = simplify::rewrite_floordiv(x, c);
  return r.is_null() ? simplify::intern_floordiv(x, c) : r;
}

IndexExpr mod(IndexExpr x, int64_t c) {
  VTC_CHECK(c > 0) << "mod by " << c << " (must be positive) in " << to_string(x);
  IndexExpr r = simplify::rewrite_mod(x, c);
  return r.is_null() ? simplify::intern_mod(x, c) : r;
}

int64_t eval(IndexExpr e, std::span<const int64_t> vars, const LoadFn& load) {
  const ExprNode* n = e.node();
  switch (n->kind) {
  case ExprKind::constant:
    return n->value;
  case ExprKind::var:
    VTC_CHECK(size_t(n->value) < vars.size()) << "no value for index variable i" << n->value;
    return vars[size_t(n->value)];
  case ExprKind::sum: {
    int64_t s = n->value;
    for (size_t k = 0; k < n->ops.size(); ++k)
      s += n->coeffs[k] * eval(IndexExpr(n->ops[k]), vars, load);
    return s;
  }
  case ExprKind::floordiv:
    return floor_div(eval(e.arg(), vars, load), n->value);
  case ExprKind::mod:
    return floor_mod(eval(e.arg(), vars, load), n->value);
  case ExprKind::load: {
    VTC_CHECK(load) << "no tensor to evaluate " << to_string(e);
    std::vector<int64_t> idx;
    for (const ExprNode* o : n->ops)
      idx.push_back(eval(IndexExpr(o), vars, load));
    return load(n->base, idx);
  }
  }
  return 0;
}

IndexExpr substitute(IndexExpr e, std::span<const IndexExpr> repl) {
  const ExprNode* n = e.node();
  if (n->max_var < 0) return e;
  switch (n->kind) {
  case ExprKind::constant:
    return e;
  case ExprKind::var:
    return size_t(n->value) < repl.size() && !repl[size_t(n->value)].is_null()
               ? repl[size_t(n->value)]
               : e;
  case ExprKind::sum: {
    IndexExpr s = IndexExpr::constant(n->value);
    for (size_t k = 0; k < n->ops.size(); ++k)
      s = s + substitute(IndexExpr(n->ops[k]), repl) * n->coeffs[k];
    return s;
  }
  case ExprKind::floordiv:
    return floordiv(substitute(e.arg(), repl), n->value);
  case ExprKind::mod:
    return mod(substitute(e.arg(), repl), n->value);
  case ExprKind::load: {
    std::vector<IndexExpr> idx;
    for (const ExprNode* o : n->ops)
      idx.push_back(substitute(IndexExpr(o), repl));
    return IndexExpr::load(n->base, idx);
  }
  }
  return e;
}

std::vector<IndexExpr> load_terms(std::span<const IndexExpr> roots) {
  std::vector<IndexExpr> out;
  std::unordered_set<const ExprNode*> seen;
  auto walk = [&](auto& self, const ExprNode* n) -> void {
    if (!n || !n->has_load || !seen.insert(n).second) return;
    if (n->kind == ExprKind::load) out.push_back(IndexExpr(n));
    for (const ExprNode* o : n->ops)
      self(self, o);
  };
  for (IndexExpr e : roots)
    walk(walk, e.node());
  return out;
}

namespace {

void print(const ExprNode* n, const VarNamer& name, std::string& out, bool atom_ctx);

void print_term(const ExprNode* atom, int64_t coeff, const VarNamer& name, std::string& out) {
  bool div_or_mod = atom->kind == ExprKind::floordiv || atom->kind == ExprKind::mod;
  print(atom, name, out, coeff != 1 || div_or_mod);
  if (coeff != 1) out += "*" + std::to_string(coeff);
}

// atom_ctx: the expression is an operand (of *, floordiv, mod) and needs parentheses unless it
// is a variable, constant or load.
void print(const ExprNode* n, const VarNamer& name, std::string& out, bool atom_ctx) {
  switch (n->kind) {
  case ExprKind::constant:
    out += std::to_string(n->value);
    return;
  case ExprKind::var:
    out += name ? name(int(n->value)) : "i" + std::to_string(n->value);
    return;
  case ExprKind::sum: {
    if (atom_ctx) out += "(";
    for (size_t k = 0; k < n->ops.size(); ++k) {
      int64_t c = n->coeffs[k];
      if (k > 0)
        out += c < 0 ? " - " : " + ";
      else if (c < 0)
        out += "-";
      print_term(n->ops[k], c < 0 ? -c : c, name, out);
    }
    if (n->value != 0)
      out += (n->value < 0 ? " - " : " + ") + std::to_string(n->value < 0 ? -n->value : n->value);
    if (atom_ctx) out += ")";
    return;
  }
  case ExprKind::floordiv:
  case ExprKind::mod:
    if (atom_ctx) out += "(";
    print(n->ops[0], name, out, true);
    out += n->kind == ExprKind::floordiv ? " floordiv " : " mod ";
    out += std::to_string(n->value);
    if (atom_ctx) out += ")";
    return;
  case ExprKind::load:
    out += "load(" + n->base->name;
    for (const ExprNode* o : n->ops) {
      out += ", ";
      print(o, name, out, false);
    }
    out += ")";
    return;
  }
}

} // namespace

std::string to_string(IndexExpr e, const VarNamer& name) {
  if (e.is_null()) return "<null>";
  std::string out;
  print(e.node(), name, out, false);
  return out;
}

} // namespace vtc
