// Emitted C++ compiled by the system compiler: random expressions (with loads, negative values
// and extents past 2^31) are emitted, compiled into one program with `c++`, run at sampled
// points, and compared with the expression interpreter.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "mapping/emit.h"
#include "vtc/error.h"

namespace vtc {
namespace {

IndexExpr random_expr(std::mt19937_64& rng, int depth, const std::vector<IndexExpr>& vars,
                      const Base* idx) {
  auto u = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  static const int64_t divs[] = {2, 3, 4, 8, 128, 1000};
  if (depth <= 0)
    return u(0, 3) == 0 ? IndexExpr::constant(u(-50, 50))
                        : vars[size_t(u(0, int64_t(vars.size()) - 1))];
  switch (u(0, 5)) {
  case 0:
    return random_expr(rng, depth - 1, vars, idx) + random_expr(rng, depth - 1, vars, idx);
  case 1:
    return random_expr(rng, depth - 1, vars, idx) * u(-7, 7);
  case 2:
    return floordiv(random_expr(rng, depth - 1, vars, idx), divs[u(0, 5)]);
  case 3:
    return mod(random_expr(rng, depth - 1, vars, idx), divs[u(0, 5)]);
  case 4:
    return IndexExpr::load(idx, {mod(random_expr(rng, depth - 1, vars, idx), 5)});
  default:
    return random_expr(rng, depth - 1, vars, idx) * 1000 + vars[0];
  }
}

TEST(Emit, CompiledExpressionsMatchTheInterpreter) {
  std::mt19937_64 rng(7);
  const Base* idx = named_base("idx", {5});
  std::vector<int64_t> idx_values{3, -4, 17, 0, -100};
  LoadFn load = [&](const Base*, std::span<const int64_t> i) { return idx_values[size_t(i[0])]; };
  // Variable extents: one past 2^31 so some expressions need 64-bit arithmetic.
  std::vector<int64_t> ext{50, 7, int64_t(3) << 31};
  std::vector<IndexExpr> vars;
  for (int v = 0; v < 3; ++v)
    vars.push_back(IndexExpr::var(v, ext[size_t(v)]));
  std::ostringstream src, expected;
  src << "#include <cstdio>\nstatic const long long idx[5] = {3, -4, 17, 0, -100};\nint main() {\n";
  int wide = 0, points = 0;
  for (int t = 0; t < 300; ++t) {
    IndexExpr e;
    try {
      e = random_expr(rng, 4, vars, idx);
    } catch (const Error&) { // a coefficient past int64: not an expression vtc can hold
      continue;
    }
    wide += needs_64bit(e);
    for (int s = 0; s < 5; ++s) {
      std::vector<int64_t> x;
      for (int64_t n : ext)
        x.push_back(std::uniform_int_distribution<int64_t>(0, n - 1)(rng));
      if (!needs_64bit(e)) x[2] = x[2] % 1000; // 32-bit programs get 32-bit inputs
      Interval b;
      try { // the value at this point, as an interval; past int64 the point is skipped
        b = bounds(e, {{x[0], x[0] + 1}, {x[1], x[1] + 1}, {x[2], x[2] + 1}});
      } catch (const Error&) {
        continue;
      }
      if (!b.is_bounded()) b = Interval{0, 0}; // loads: their values are small
      if (!needs_64bit(e) && !(b.lo > -2147483647 && b.hi < 2147483647)) continue;
      const char* ty = needs_64bit(e) ? "long long" : "int";
      src << "  { " << ty << " i0 = " << x[0] << ", i1 = " << x[1] << ", i2 = " << x[2]
          << "LL; std::printf(\"%lld\\n\", (long long)(" << emit(e) << ")); }\n";
      expected << eval(e, x, load) << "\n";
      ++points;
    }
  }
  src << "  return 0;\n}\n";
  EXPECT_GT(wide, 10);
  std::string dir = testing::TempDir();
  std::ofstream(dir + "/vtc_emit_test.cpp") << src.str();
  std::string cmd = "c++ -std=c++17 -O0 -w " + dir + "/vtc_emit_test.cpp -o " + dir +
                    "/vtc_emit_test && " + dir + "/vtc_emit_test > " + dir + "/vtc_emit_test.out";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream out(dir + "/vtc_emit_test.out");
  std::stringstream got;
  got << out.rdbuf();
  EXPECT_EQ(got.str(), expected.str());
  std::printf("[ property ] emitted C++: %d points compiled and compared\n", points);
}

TEST(Emit, PieceOffsetAndGuard) {
  const Base* k = named_base("k cache", {8, 4096, 128});
  Box g{{0, 32}, {0, 4096}, {0, 128}};
  std::vector<IndexExpr> i = box_vars(g);
  Piece p{g, {}, k, {floordiv(i[0], 4), i[1], i[2]}, 0};
  EXPECT_EQ(emit_offset(p), "i1 * 128 + i2 + (i0 / 4) * 524288");
  EXPECT_EQ(emit_base_name(k), "k_cache");
  EXPECT_EQ(emit(IndexExpr::var(0, int64_t(1) << 33) * 3 + 1), "(long long)i0 * 3LL + 1LL");
  EXPECT_EQ(emit(floordiv(IndexExpr::var(0, 10) - 5, 4)), "((i0 + 3) / 4) - 2"); // -5 = 4·(-2) + 3
  EXPECT_EQ(emit(floordiv(-IndexExpr::var(0, 10), 4)),
            "((-i0) >= 0 ? (-i0) / 4 : ((-i0) - 3) / 4)");
}

// A piece's guard tests every bound of its box, except, given the tensor's shape, the bounds
// the shape already keeps: the second of three Concat pieces along axis 1 of [16, 192, 1, 25600]
// is told apart by its channels alone.
TEST(Emit, GuardLeavesOutTheShapesOwnBounds) {
  const Base* x = named_base("x", {16, 64, 1, 25600});
  Box g{{0, 16}, {64, 128}, {0, 1}, {0, 25600}};
  std::vector<IndexExpr> i = box_vars(g);
  Piece p{g, {}, x, {i[0], i[1] - 64, i[2], i[3]}, 0};
  EXPECT_EQ(emit_guard(p), "i0 >= 0 && i0 < 16 && i1 >= 64 && i1 < 128 && i2 >= 0 && i2 < 1 && "
                           "i3 >= 0 && i3 < 25600");
  EXPECT_EQ(emit_guard(p, {}, {16, 192, 1, 25600}), "i1 >= 64 && i1 < 128");
  Piece last{
      Box{{0, 16}, {128, 192}, {0, 1}, {0, 25600}}, {}, x, {i[0], i[1] - 128, i[2], i[3]}, 0};
  EXPECT_EQ(emit_guard(last, {}, {16, 192, 1, 25600}), "i1 >= 128");
  Piece whole{Box{{0, 16}, {0, 192}, {0, 1}, {0, 25600}}, {}, x, {i[0], i[1], i[2], i[3]}, 0};
  EXPECT_EQ(emit_guard(whole, {}, {16, 192, 1, 25600}), "true");
}

} // namespace
} // namespace vtc
