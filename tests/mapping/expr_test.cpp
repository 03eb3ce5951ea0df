// IndexExpr: the simplifier's laws on worked examples (golden text), uniquing, bounds, and a
// fuzz test: random expression trees evaluated directly and through the simplifying
// constructors agree at sampled points.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "mapping/index_expr.h"
#include "vtc/error.h"

namespace vtc {
namespace {

IndexExpr I(int64_t e) {
  return IndexExpr::var(0, e);
}
IndexExpr J(int64_t e) {
  return IndexExpr::var(1, e);
}
IndexExpr K(int64_t e) {
  return IndexExpr::var(2, e);
}

TEST(IndexExpr, SimplifiesWhileBuilt) {
  IndexExpr i = I(1000), j = J(4), k = K(16);
  EXPECT_EQ(to_string(floordiv(i * 128, 64)), "i0*2");
  EXPECT_EQ(to_string(floordiv(i, 4) * 4 + mod(i, 4)), "i0");
  EXPECT_EQ(to_string(mod(j, 8)), "i1"); // bounded: j < 8
  EXPECT_EQ(to_string(floordiv(j, 8)), "0");
  EXPECT_EQ(to_string(mod(i * 4 + j, 8)), "i1 + (i0 mod 2)*4");
  EXPECT_EQ(to_string(floordiv(i * 4 + j, 8)), "i0 floordiv 2");
  IndexExpr f = i * 64 + j * 16 + k; // flat index of [1000, 4, 16]
  EXPECT_EQ(to_string(mod(floordiv(f, 16), 4)), "i1");
  EXPECT_EQ(to_string(floordiv(f, 64)), "i0");
  EXPECT_EQ(to_string(mod(floordiv(i, 2), 5) * 2 + mod(i, 2)), "i0 mod 10");
  EXPECT_EQ(to_string(floordiv(i, 10) * 5 + mod(floordiv(i, 2), 5)), "i0 floordiv 2");
  EXPECT_EQ(to_string(floordiv(floordiv(i, 3), 5)), "i0 floordiv 15");
  EXPECT_EQ(to_string(mod(mod(i, 12), 4)), "i0 mod 4");
  EXPECT_EQ(to_string(floordiv(i * 6 + 3, 9)), "(i0*2 + 1) floordiv 3");
  EXPECT_EQ(to_string(i - i), "0");
  EXPECT_EQ(to_string(j * -1 + 7), "-i1 + 7");
  EXPECT_EQ(to_string(floordiv(i, 7) - 3), "(i0 floordiv 7) - 3");
}

TEST(IndexExpr, EqualExpressionsAreTheSameObject) {
  IndexExpr a = I(100) * 3 + J(5), b = J(5) + I(100) * 2 + I(100);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.node(), b.node());
  EXPECT_NE(I(100), I(50)); // a variable's range is part of it
}

TEST(IndexExpr, BoundsAndLoads) {
  IndexExpr e = I(10) * 3 - J(4) + 2;
  EXPECT_EQ(e.bounds(), (Interval{-1, 29}));
  const Base* idx = named_base("idx", {4});
  IndexExpr l = IndexExpr::load(idx, {J(4)});
  EXPECT_FALSE(l.bounds().is_bounded());
  EXPECT_EQ(to_string(mod(l, 8)), "load(idx, i1) mod 8");
  const Base* nonneg = named_base("idx", {4}, Interval{0, 7});
  EXPECT_EQ(to_string(mod(IndexExpr::load(nonneg, {J(4)}), 8)), "load(idx, i1)");
  std::vector<int64_t> data{5, -1, 3, 2};
  LoadFn fn = [&](const Base*, std::span<const int64_t> ix) { return data[size_t(ix[0])]; };
  std::vector<int64_t> vars{0, 1};
  EXPECT_EQ(eval(mod(l, 8), vars, fn), 7);
  EXPECT_THROW(floordiv(I(4), 0), Error);
}

// An unsimplified expression tree, evaluated directly with floor semantics.
struct Ast {
  enum Kind { c, v, add, mul, div, mod } kind;
  int64_t k = 0;
  std::unique_ptr<Ast> a, b;
  int64_t eval(const std::vector<int64_t>& x) const {
    switch (kind) {
    case c:
      return k;
    case v:
      return x[size_t(k)];
    case add:
      return a->eval(x) + b->eval(x);
    case mul:
      return a->eval(x) * k;
    case div:
      return floor_div(a->eval(x), k);
    case mod:
      return floor_mod(a->eval(x), k);
    }
    return 0;
  }
  IndexExpr build(const std::vector<int64_t>& ext) const {
    switch (kind) {
    case c:
      return IndexExpr::constant(k);
    case v:
      return IndexExpr::var(int(k), ext[size_t(k)]);
    case add:
      return a->build(ext) + b->build(ext);
    case mul:
      return a->build(ext) * k;
    case div:
      return floordiv(a->build(ext), k);
    case mod:
      return vtc::mod(a->build(ext), k);
    }
    return {};
  }
};

std::unique_ptr<Ast> random_ast(std::mt19937_64& rng, int depth) {
  auto u = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto n = std::make_unique<Ast>();
  int kind = depth <= 0 ? int(u(0, 1)) : int(u(0, 5));
  n->kind = Ast::Kind(kind);
  static const int64_t divisors[] = {1, 2, 3, 4, 6, 8, 12, 16, 64, 128};
  switch (n->kind) {
  case Ast::c:
    n->k = u(-20, 20);
    break;
  case Ast::v:
    n->k = u(0, 2);
    break;
  case Ast::add:
    n->a = random_ast(rng, depth - 1), n->b = random_ast(rng, depth - 1);
    break;
  case Ast::mul:
    n->a = random_ast(rng, depth - 1), n->k = u(0, 1) ? divisors[u(0, 9)] : u(-5, 5);
    break;
  case Ast::div:
  case Ast::mod:
    n->a = random_ast(rng, depth - 1), n->k = divisors[u(0, 9)];
    break;
  }
  return n;
}

TEST(IndexExpr, FuzzSimplifiedEvaluatesLikeTheTree) {
  std::mt19937_64 rng(42);
  int checked = 0;
  for (int t = 0; t < 3000; ++t) {
    std::vector<int64_t> ext{std::uniform_int_distribution<int64_t>(1, 300)(rng),
                             std::uniform_int_distribution<int64_t>(1, 40)(rng),
                             std::uniform_int_distribution<int64_t>(1, 9)(rng)};
    auto ast = random_ast(rng, 5);
    IndexExpr e = ast->build(ext);
    for (int s = 0; s < 20; ++s) {
      std::vector<int64_t> x;
      for (int64_t n : ext)
        x.push_back(std::uniform_int_distribution<int64_t>(0, n - 1)(rng));
      ASSERT_EQ(eval(e, x), ast->eval(x)) << to_string(e);
      Interval b = e.bounds();
      ASSERT_TRUE(eval(e, x) >= b.lo && eval(e, x) <= b.hi) << to_string(e);
      ++checked;
    }
  }
  std::printf("[ property ] simplifier fuzz: %d points\n", checked);
}

} // namespace
} // namespace vtc
