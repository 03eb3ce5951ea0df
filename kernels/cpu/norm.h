// Row-wise normalisations over the last axis of a rank-2 view [rows, D]: LayerNorm and
// RMSNorm (eps, optional gamma / beta rank-1 accessors over D, optional per-row mean and
// inverse-standard-deviation outputs), softmax and log-softmax; the reductions of reduce.h
// come with this header. Each row is staged in a local buffer (stage 1), normalised there
// in a fixed order — two-pass variance, max-subtracted softmax, sums in the lane order of
// vmath.h, multiply-adds as std::fma — and stored through the output accessor (stage 3), so
// the result depends on the row's values only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "parallel.h"
#include "reduce.h"
#include "stage.h"
#include "vmath.h"

namespace vtc::kernels {

namespace detail {

// Calls fn(row, buffer) for every row with the row staged in `buffer` (length d), rows
// spread over the threads.
template <typename C, typename InA, typename F>
void for_each_row(const InA& in, int64_t rows, int64_t d, const F& fn) {
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(d, 1));
  parallel_chunks(rows, grain, [&](int64_t r0, int64_t r1) {
    C* buf = scratch<C, 0>(d);
    for (int64_t r = r0; r < r1; ++r) {
      load_run(in, Index<2>{r, 0}, d, buf);
      fn(r, buf);
    }
  });
}

// Rows at most this long are normalised kRowGroup at a time (for_each_row_group).
inline constexpr int64_t kShortRow = 64, kRowGroup = 16;

// Calls fn(r0, count, buffer) for groups of `count` <= kRowGroup consecutive rows from r0, row
// r0 + i staged at buffer + i * d, groups spread over the threads. A kernel that takes each
// step of its short rows across the group (every row's sum, then every row's variance, ...)
// runs the rows' dependent chains side by side instead of one row's after another.
template <typename C, typename InA, typename F>
void for_each_row_group(const InA& in, int64_t rows, int64_t d, const F& fn) {
  const int64_t grain = std::max<int64_t>(kRowGroup, 16384 / std::max<int64_t>(d, 1));
  parallel_chunks(rows, grain, [&](int64_t r0, int64_t r1) {
    C* buf = scratch<C, 0>(kRowGroup * d);
    for (int64_t r = r0; r < r1; r += kRowGroup) {
      const int64_t count = std::min(kRowGroup, r1 - r);
      for (int64_t i = 0; i < count; ++i)
        load_run(in, Index<2>{r + i, 0}, d, buf + i * d);
      fn(r, count, buf);
    }
  });
}

// An optional rank-1 operand over D, staged once for all rows (nullptr when absent).
template <typename C, int Slot, typename A> const C* stage_vector(const A& a, int64_t d) {
  if constexpr (is_present<A>) {
    C* v = scratch<C, Slot>(d);
    load_run(a, Index<1>{0}, d, v);
    return v;
  } else {
    return nullptr;
  }
}

template <typename A, typename C> void store_scalar(const A& a, int64_t r, C v) {
  if constexpr (is_present<A>) a.store(Index<1>{r}, v);
}

// y = x * inv (then * gamma, + beta), in place.
template <typename C>
inline void scale_shift(C* x, int64_t d, C shift, C inv, const C* gamma, const C* beta) {
  if (gamma && beta) {
    for (int64_t j = 0; j < d; ++j)
      x[j] = std::fma((x[j] - shift) * inv, gamma[j], beta[j]);
  } else if (gamma) {
    for (int64_t j = 0; j < d; ++j)
      x[j] = (x[j] - shift) * inv * gamma[j];
  } else if (beta) {
    for (int64_t j = 0; j < d; ++j)
      x[j] = std::fma(x[j] - shift, inv, beta[j]);
  } else {
    for (int64_t j = 0; j < d; ++j)
      x[j] = (x[j] - shift) * inv;
  }
}

} // namespace detail

// y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * gamma + beta, with the mean and the biased
// variance of the row (two passes). mean_out / inv_std_out, when given, receive the row's
// mean and 1 / sqrt(var + eps).
template <Accessor YA, Accessor XA, OptionalAccessor GA = NoAccessor,
          OptionalAccessor BA = NoAccessor, OptionalAccessor MA = NoAccessor,
          OptionalAccessor IA = NoAccessor>
void layer_norm(const YA& y, const XA& x, int64_t rows, int64_t d, double eps, const GA& gamma = {},
                const BA& beta = {}, const MA& mean_out = {}, const IA& inv_std_out = {}) {
  using C = compute_t<XA>;
  const C* g = detail::stage_vector<C, 1>(gamma, d);
  const C* b = detail::stage_vector<C, 2>(beta, d);
  if (d <= detail::kShortRow) {
    // Short rows (ConvNeXt's 8 channels) are latency-bound one at a time; a group's rows take
    // each step together. Each row's operations are those below: the same bits.
    detail::for_each_row_group<C>(x, rows, d, [&](int64_t r0, int64_t count, C* buf) {
      C mean[detail::kRowGroup], inv[detail::kRowGroup];
      for (int64_t i = 0; i < count; ++i)
        mean[i] = sum_fixed(buf + i * d, d) / C(d);
      for (int64_t i = 0; i < count; ++i)
        inv[i] = sum_sq_dev_fixed(buf + i * d, d, mean[i]) / C(d);
      for (int64_t i = 0; i < count; ++i)
        inv[i] = C(1) / std::sqrt(inv[i] + C(eps));
      for (int64_t i = 0; i < count; ++i) {
        detail::scale_shift(buf + i * d, d, mean[i], inv[i], g, b);
        store_run(y, Index<2>{r0 + i, 0}, d, buf + i * d);
        detail::store_scalar(mean_out, r0 + i, mean[i]);
        detail::store_scalar(inv_std_out, r0 + i, inv[i]);
      }
    });
    return;
  }
  detail::for_each_row<C>(x, rows, d, [&](int64_t r, C* buf) {
    const C mean = sum_fixed(buf, d) / C(d);
    const C var = sum_sq_dev_fixed(buf, d, mean) / C(d);
    const C inv = C(1) / std::sqrt(var + C(eps));
    detail::scale_shift(buf, d, mean, inv, g, b);
    store_run(y, Index<2>{r, 0}, d, buf);
    detail::store_scalar(mean_out, r, mean);
    detail::store_scalar(inv_std_out, r, inv);
  });
}

// y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * gamma + beta.
template <Accessor YA, Accessor XA, OptionalAccessor GA = NoAccessor,
          OptionalAccessor BA = NoAccessor>
void rms_norm(const YA& y, const XA& x, int64_t rows, int64_t d, double eps, const GA& gamma = {},
              const BA& beta = {}) {
  using C = compute_t<XA>;
  const C* g = detail::stage_vector<C, 1>(gamma, d);
  const C* b = detail::stage_vector<C, 2>(beta, d);
  detail::for_each_row<C>(x, rows, d, [&](int64_t r, C* buf) {
    const C ms = sum_sq_dev_fixed(buf, d, C(0)) / C(d);
    const C inv = C(1) / std::sqrt(ms + C(eps));
    detail::scale_shift(buf, d, C(0), inv, g, b);
    store_run(y, Index<2>{r, 0}, d, buf);
  });
}

// y[r, j] = exp(x[r, j] - m) / sum_j exp(x[r, j] - m), m the row maximum.
template <Accessor YA, Accessor XA>
void softmax(const YA& y, const XA& x, int64_t rows, int64_t d) {
  using C = compute_t<XA>;
  detail::for_each_row<C>(x, rows, d, [&](int64_t r, C* buf) {
    const C m = max_fixed(buf, d);
    for (int64_t j = 0; j < d; ++j)
      buf[j] = exp_fast(buf[j] - m);
    const C s = sum_fixed(buf, d);
    for (int64_t j = 0; j < d; ++j)
      buf[j] = buf[j] / s;
    store_run(y, Index<2>{r, 0}, d, buf);
  });
}

// y[r, j] = (x[r, j] - m) - log(sum_j exp(x[r, j] - m)).
template <Accessor YA, Accessor XA>
void log_softmax(const YA& y, const XA& x, int64_t rows, int64_t d) {
  using C = compute_t<XA>;
  detail::for_each_row<C>(x, rows, d, [&](int64_t r, C* buf) {
    const C m = max_fixed(buf, d);
    const C s = sum_fixed(buf, d, [m](C v) { return exp_fast(v - m); });
    const C ls = std::log(s);
    for (int64_t j = 0; j < d; ++j)
      buf[j] = (buf[j] - m) - ls;
    store_run(y, Index<2>{r, 0}, d, buf);
  });
}

} // namespace vtc::kernels
