// Closed integer intervals with saturating arithmetic: the value ranges the simplifier and
// `bounds` reason with. The ends kNegInf / kPosInf stand for "unbounded" and absorb any
// arithmetic applied to them, so an unknown (load) term makes a sum unbounded, not wrong.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace vtc {

struct Interval {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

  int64_t lo = kNegInf; // inclusive
  int64_t hi = kPosInf; // inclusive

  static Interval point(int64_t v) { return {v, v}; }
  static Interval unbounded() { return {}; }
  bool is_bounded() const { return lo != kNegInf && hi != kPosInf; }
  bool is_point() const { return is_bounded() && lo == hi; }
  bool within(int64_t a, int64_t b) const { return lo >= a && hi <= b; } // [lo,hi] ⊆ [a,b]
  bool operator==(const Interval&) const = default;
};

namespace interval_detail {
inline int64_t sat_add(int64_t a, int64_t b) {
  if (a == Interval::kNegInf || b == Interval::kNegInf) return Interval::kNegInf;
  if (a == Interval::kPosInf || b == Interval::kPosInf) return Interval::kPosInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? Interval::kPosInf : Interval::kNegInf;
  return r;
}
inline int64_t sat_mul(int64_t a, int64_t c) {
  if (c == 0) return 0;
  if (a == Interval::kNegInf || a == Interval::kPosInf)
    return (a > 0) == (c > 0) ? Interval::kPosInf : Interval::kNegInf;
  int64_t r;
  if (__builtin_mul_overflow(a, c, &r))
    return (a > 0) == (c > 0) ? Interval::kPosInf : Interval::kNegInf;
  return r;
}
} // namespace interval_detail

// Floor division and floor modulo (the result of mod has the sign of the positive divisor).
inline int64_t floor_div(int64_t a, int64_t c) {
  int64_t q = a / c;
  return (a % c != 0 && ((a < 0) != (c < 0))) ? q - 1 : q;
}
inline int64_t floor_mod(int64_t a, int64_t c) {
  int64_t r = a % c;
  return (r != 0 && ((r < 0) != (c < 0))) ? r + c : r;
}

inline Interval operator+(Interval a, Interval b) {
  return {interval_detail::sat_add(a.lo, b.lo), interval_detail::sat_add(a.hi, b.hi)};
}
inline Interval operator*(Interval a, int64_t c) {
  int64_t x = interval_detail::sat_mul(a.lo, c), y = interval_detail::sat_mul(a.hi, c);
  return {std::min(x, y), std::max(x, y)};
}
// Interval of x floordiv c for x in a, c > 0.
inline Interval floordiv(Interval a, int64_t c) {
  return {a.lo == Interval::kNegInf ? a.lo : floor_div(a.lo, c),
          a.hi == Interval::kPosInf ? a.hi : floor_div(a.hi, c)};
}
// Interval of x mod c for x in a, c > 0: exact when a lies within one period.
inline Interval mod(Interval a, int64_t c) {
  if (a.is_bounded() && floor_div(a.lo, c) == floor_div(a.hi, c))
    return {floor_mod(a.lo, c), floor_mod(a.hi, c)};
  return {0, c - 1};
}
inline Interval hull(Interval a, Interval b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

} // namespace vtc
