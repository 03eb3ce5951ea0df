// The stride phases of a sliding-window kernel's padded input plane (depthwise convolution,
// pooling). Phase (a, b) holds the padded rows y*sh + a and columns x*sw + b, so that window
// tap (r, q) reads its phase at a fixed offset from output position (y, x) = (j / wq, j % wq):
// the whole output plane, at the phases' row pitch wq, is one flat run of j per tap, whatever
// the plane's width (a few columns past w_out are computed and dropped). Without strides the
// padded plane is its own single phase and nothing is copied.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stage.h"

namespace vtc::kernels {

struct WindowPhases {
  int64_t sh = 1, sw = 1;
  int64_t hp = 0, wp = 0;    // the padded plane: every input position an output reads
  int64_t hq = 0, wq = 0;    // one phase
  int64_t flat = 0;          // outputs computed: h_out rows at pitch wq, rounded up to `round`
  int64_t size = 0;          // the phases' buffer, with slack for the last tap's reads
  std::vector<int64_t> taps; // offset of tap (r, q) at r * kw + q, for output j = 0

  bool one_phase() const { return sh * sw == 1; }
};

inline WindowPhases window_phases(int64_t h_out, int64_t w_out, int64_t kh, int64_t kw, int64_t sh,
                                  int64_t sw, int64_t dh, int64_t dw, int64_t round) {
  WindowPhases p;
  p.sh = sh;
  p.sw = sw;
  p.hp = (h_out - 1) * sh + (kh - 1) * dh + 1;
  p.wp = (w_out - 1) * sw + (kw - 1) * dw + 1;
  p.hq = (p.hp + sh - 1) / sh;
  p.wq = (p.wp + sw - 1) / sw;
  p.flat = (h_out * p.wq + round - 1) / round * round;
  const int64_t phase = p.hq * p.wq;
  p.taps.resize(size_t(kh * kw));
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t q = 0; q < kw; ++q) {
      const int64_t dy = r * dh, dx = q * dw;
      p.taps[size_t(r * kw + q)] = (dy % sh * sw + dx % sw) * phase + dy / sh * p.wq + dx / sw;
    }
  p.size = std::max(sh * sw * phase, *std::max_element(p.taps.begin(), p.taps.end()) + p.flat);
  return p;
}

// The phases of `plane` (hp x wp, row-major) into `phases` (p.size values; `fill` in the
// slack and past each phase row's columns). With one phase, `plane` must be `phases` (only
// the slack is filled).
template <typename C> void split_phases(const WindowPhases& p, const C* plane, C* phases, C fill) {
  const int64_t phase = p.hq * p.wq;
  if (p.one_phase()) {
    std::fill(phases + p.hp * p.wp, phases + p.size, fill);
    return;
  }
  std::fill(phases + p.sh * p.sw * phase, phases + p.size, fill);
  for (int64_t a = 0; a < p.sh; ++a)
    for (int64_t b = 0; b < p.sw; ++b)
      for (int64_t y = 0; y < p.hq; ++y) {
        C* dst = phases + (a * p.sw + b) * phase + y * p.wq;
        const int64_t row = y * p.sh + a;
        const int64_t n = row < p.hp ? (p.wp - b + p.sw - 1) / p.sw : 0; // columns here
        if (n > 0) copy_strided(plane + row * p.wp + b, p.sw, n, dst);
        fill_edge(dst + n, p.wq - n, fill);
      }
}

} // namespace vtc::kernels
