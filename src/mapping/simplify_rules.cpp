// The simplifier of index expressions as rule tables, in the style of Halide's Simplify_*.cpp
// and TVM's rewrite_simplify.cc: each line is one rewrite with its law, tried in order; the
// first that fires wins and its result is built again through the simplifying constructors.
// x, y are expressions, c, c0, c1, g, k constants (divisors > 0); bounds come from the ranges of
// the variables. Every law holds for floor division and floor modulo on all integers.
#include "mapping/simplify_rules.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace vtc::simplify {
namespace {

using X = IndexExpr;
using C = int64_t;
const IndexExpr kNone; // "rule did not fire"

IndexExpr K(int64_t v) {
  return IndexExpr::constant(v);
}

// x = c·q + r where q collects the terms (and constant part) divisible by d; any: q ≠ 0.
struct Split {
  Linear q, r;
  bool any = false;
};
Split split_multiples(X x, int64_t d) {
  Linear l = linear(x);
  Split s;
  s.q.c = floor_div(l.c, d);
  s.r.c = floor_mod(l.c, d);
  s.any = s.q.c != 0;
  for (auto& t : l.terms) {
    if (t.first % d == 0) {
      s.q.terms.emplace_back(t.first / d, t.second);
      s.any = true;
    } else {
      s.r.terms.push_back(t);
    }
  }
  return s;
}

// x·g floordiv c·g: the largest g > 1 dividing c, the constant and every coefficient (else 1).
int64_t common_factor(X x, int64_t c) {
  Linear l = linear(x);
  int64_t g = std::gcd(c, l.c);
  for (auto& t : l.terms)
    g = std::gcd(g, t.first);
  return g;
}
IndexExpr divide_exact(X x, int64_t g) {
  Linear l = linear(x);
  l.c /= g;
  for (auto& t : l.terms)
    t.first /= g;
  return build(std::move(l));
}

// x = d·q + r with d | c, 1 < d < c and 0 ≤ r < d (r: the terms not divisible by d).
struct SmallRest {
  IndexExpr q, r;
  int64_t d;
};
std::optional<SmallRest> split_small_rest(X x, int64_t c) {
  Linear l = linear(x);
  std::vector<int64_t> ds;
  for (auto& t : l.terms)
    ds.push_back(std::gcd(t.first < 0 ? -t.first : t.first, c));
  std::sort(ds.rbegin(), ds.rend());
  for (int64_t d : ds) {
    if (d <= 1 || d >= c) continue;
    Split s = split_multiples(x, d);
    if (s.q.terms.empty()) continue;
    IndexExpr r = build(s.r);
    if (r.bounds().within(0, d - 1)) return SmallRest{build(s.q), r, d};
  }
  return std::nullopt;
}

// All of x lies in one period [k·c, (k+1)·c).
bool one_period(X x, int64_t c) {
  Interval b = x.bounds();
  return b.is_bounded() && floor_div(b.lo, c) == floor_div(b.hi, c);
}

struct DivModRule {
  const char* law;
  IndexExpr (*apply)(X x, C c);
};

const DivModRule kFloorDivRules[] = {
    {"c0 floordiv c1 = ⌊c0/c1⌋",
     [](X x, C c) { return x.is_constant() ? K(floor_div(x.constant_value(), c)) : kNone; }},
    {"x floordiv 1 = x", [](X x, C c) { return c == 1 ? x : kNone; }},
    {"x floordiv c = k  if k·c ≤ x < (k+1)·c",
     [](X x, C c) { return one_period(x, c) ? K(floor_div(x.bounds().lo, c)) : kNone; }},
    {"(x floordiv c0) floordiv c1 = x floordiv (c0·c1)",
     [](X x, C c) {
       return x.kind() == ExprKind::floordiv ? floordiv(x.arg(), x.divisor() * c) : kNone;
     }},
    {"(x·c + y) floordiv c = x + y floordiv c",
     [](X x, C c) {
       Split s = split_multiples(x, c);
       return s.any ? build(s.q) + floordiv(build(s.r), c) : kNone;
     }},
    {"(x·g) floordiv (c·g) = x floordiv c",
     [](X x, C c) {
       int64_t g = common_factor(x, c);
       return g > 1 ? floordiv(divide_exact(x, g), c / g) : kNone;
     }},
    {"(x·c0 + y) floordiv (c0·c1) = x floordiv c1  if 0 ≤ y < c0",
     [](X x, C c) {
       auto s = split_small_rest(x, c);
       return s ? floordiv(s->q, c / s->d) : kNone;
     }},
};

const DivModRule kModRules[] = {
    {"c0 mod c1 = c0 - ⌊c0/c1⌋·c1",
     [](X x, C c) { return x.is_constant() ? K(floor_mod(x.constant_value(), c)) : kNone; }},
    {"x mod 1 = 0", [](X x, C c) { return c == 1 ? K(0) : kNone; }},
    {"x mod c = x - k·c  if k·c ≤ x < (k+1)·c",
     [](X x, C c) { return one_period(x, c) ? x - floor_div(x.bounds().lo, c) * c : kNone; }},
    {"(x mod c0) mod c1 = x mod c1  if c1 | c0",
     [](X x, C c) {
       return x.kind() == ExprKind::mod && x.divisor() % c == 0 ? mod(x.arg(), c) : kNone;
     }},
    {"(x·c + y) mod c = y mod c",
     [](X x, C c) {
       Split s = split_multiples(x, c);
       return s.any ? mod(build(s.r), c) : kNone;
     }},
    {"(x·g) mod (c·g) = (x mod c)·g",
     [](X x, C c) {
       int64_t g = common_factor(x, c);
       return g > 1 ? mod(divide_exact(x, g), c / g) * g : kNone;
     }},
    {"(x·c0 + y) mod (c0·c1) = (x mod c1)·c0 + y  if 0 ≤ y < c0",
     [](X x, C c) {
       auto s = split_small_rest(x, c);
       return s ? mod(s->q, c / s->d) * s->d + s->r : kNone;
     }},
};

// Sum rules look at two terms a·A and b·B of a canonical sum; on a match both are replaced by
// the rewritten term.
struct SumMatch {
  IndexExpr replacement; // null: no match
  int64_t k = 0;         // its coefficient
};
using T = std::pair<int64_t, const ExprNode*>;
bool is(const ExprNode* n, ExprKind k) {
  return n->kind == k;
}

struct SumRule {
  const char* law;
  SumMatch (*apply)(const T& a, const T& b);
};

const SumRule kSumRules[] = {
    {"(x floordiv c)·c·k + (x mod c)·k = x·k",
     [](const T& a, const T& b) {
       bool ok = is(a.second, ExprKind::floordiv) && is(b.second, ExprKind::mod) &&
                 a.second->ops == b.second->ops && a.second->value == b.second->value &&
                 a.first == b.first * b.second->value;
       return ok ? SumMatch{IndexExpr(b.second->ops[0]), b.first} : SumMatch{};
     }},
    {"((x floordiv c0) mod c1)·c0·k + (x mod c0)·k = (x mod (c0·c1))·k",
     [](const T& a, const T& b) {
       bool ok = is(a.second, ExprKind::mod) && is(a.second->ops[0], ExprKind::floordiv) &&
                 is(b.second, ExprKind::mod) && a.second->ops[0]->ops == b.second->ops &&
                 a.second->ops[0]->value == b.second->value && a.first == b.first * b.second->value;
       return ok ? SumMatch{mod(IndexExpr(b.second->ops[0]), b.second->value * a.second->value),
                            b.first}
                 : SumMatch{};
     }},
    {"(x floordiv (c0·c1))·c1·k + ((x floordiv c0) mod c1)·k = (x floordiv c0)·k",
     [](const T& a, const T& b) {
       bool ok = is(a.second, ExprKind::floordiv) && is(b.second, ExprKind::mod) &&
                 is(b.second->ops[0], ExprKind::floordiv) &&
                 b.second->ops[0]->ops == a.second->ops &&
                 a.second->value == b.second->ops[0]->value * b.second->value &&
                 a.first == b.first * b.second->value;
       return ok ? SumMatch{IndexExpr(b.second->ops[0]), b.first} : SumMatch{};
     }},
};

} // namespace

IndexExpr rewrite_floordiv(IndexExpr x, int64_t c) {
  for (const DivModRule& r : kFloorDivRules)
    if (IndexExpr e = r.apply(x, c); !e.is_null()) return e;
  return kNone;
}

IndexExpr rewrite_mod(IndexExpr x, int64_t c) {
  for (const DivModRule& r : kModRules)
    if (IndexExpr e = r.apply(x, c); !e.is_null()) return e;
  return kNone;
}

bool rewrite_sum(Linear& l) {
  for (size_t a = 0; a < l.terms.size(); ++a)
    for (size_t b = 0; b < l.terms.size(); ++b) {
      if (a == b) continue;
      for (const SumRule& r : kSumRules) {
        SumMatch m = r.apply(l.terms[a], l.terms[b]);
        if (m.replacement.is_null()) continue;
        l.terms.erase(l.terms.begin() + std::max(a, b));
        l.terms.erase(l.terms.begin() + std::min(a, b));
        Linear add = linear(m.replacement);
        l.c += add.c * m.k;
        for (auto& t : add.terms)
          l.terms.emplace_back(t.first * m.k, t.second);
        return true;
      }
    }
  return false;
}

} // namespace vtc::simplify
