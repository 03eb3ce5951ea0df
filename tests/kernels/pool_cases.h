// Pooling shapes for the kernel tests: a case as a row of numbers (n, channels, plane, window,
// strides, dilations, pads, ceil mode) and the Pool2dShape it makes.
#pragma once

#include <cstdint>

#include "kernels/common/window_shapes.h"

namespace vtc::kernels::test {

struct PoolCase {
  int64_t n, c, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  bool ceil_mode;
};

inline Pool2dShape pool_shape(const PoolCase& c) {
  Pool2dShape s;
  s.n = c.n;
  s.c = c.c;
  s.h = c.h;
  s.w = c.w;
  s.kh = c.kh;
  s.kw = c.kw;
  s.stride_h = c.sh;
  s.stride_w = c.sw;
  s.dil_h = c.dh;
  s.dil_w = c.dw;
  s.pad_top = c.pt;
  s.pad_left = c.pl;
  s.pad_bottom = c.pb;
  s.pad_right = c.pr;
  auto out = [&](int64_t in, int64_t k, int64_t st, int64_t d, int64_t p0, int64_t p1) {
    const int64_t span = in + p0 + p1 - ((k - 1) * d + 1);
    int64_t o = (c.ceil_mode ? (span + st - 1) / st : span / st) + 1;
    if (c.ceil_mode && (o - 1) * st >= in + p0) --o; // the last window starts inside
    return o;
  };
  s.h_out = out(c.h, c.kh, c.sh, c.dh, c.pt, c.pb);
  s.w_out = out(c.w, c.kw, c.sw, c.dw, c.pl, c.pr);
  return s;
}

} // namespace vtc::kernels::test
