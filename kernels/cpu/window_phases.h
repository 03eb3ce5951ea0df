// The stride phases of a sliding-window kernel's padded input plane (depthwise convolution,
// pooling). Phase (a, b) holds the padded rows y*sh + a and columns x*sw + b, so that window
// tap (r, q) reads its phase at a fixed offset from output position (y, x) = (j / wq, j % wq):
// the whole output plane, at the phases' row pitch wq, is one flat run of j per tap, whatever
// the plane's width (a few columns past w_out are computed and dropped). Without strides the
// padded plane is its own single phase and nothing is copied.
//
// stage_window_phases() builds the phases of an input plane: for small f32 planes whose rows
// lie contiguous in memory, at strides of 1 or 2 along a row, straight from the input rows, 16
// phase values per permute (simd.h's StridedLanes); otherwise through a staged padded plane
// that split_phases() cuts up.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "parallel.h"
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

// Where a window kernel's input plane lies: channel plane (n, c) of an NCHW accessor, h x w,
// with pad_top rows and pad_left columns of padding before it.
struct PlaneAt {
  int64_t n = 0, c = 0, h = 0, w = 0, pad_top = 0, pad_left = 0;
};

// Rows first_row .. first_row + rows - 1 of the padded plane (input rows from -pad_top on),
// columns -pad_left .. -pad_left + wp - 1, into `plane` (row stride wp), `fill` outside the
// input.
template <typename C, typename A>
inline void stage_padded_rows(const A& in, const PlaneAt& at, int64_t first_row, int64_t rows,
                              int64_t wp, C fill, C* plane) {
  const int64_t x_lo = std::clamp<int64_t>(at.pad_left, 0, wp);
  const int64_t x_hi = std::clamp<int64_t>(at.pad_left + at.w, x_lo, wp);
  for (int64_t j = 0; j < rows; ++j) {
    C* row = plane + j * wp;
    const int64_t hy = first_row + j;
    if (hy < 0 || hy >= at.h || x_lo >= x_hi) {
      std::fill(row, row + wp, fill);
      continue;
    }
    fill_edge(row, x_lo, fill);
    load_run(in, Index<4>{at.n, at.c, hy, x_lo - at.pad_left}, x_hi - x_lo, row + x_lo);
    fill_edge(row + x_hi, wp - x_hi, fill);
  }
}

// Whether phase rows can be gathered straight from the input's rows (f32 rows contiguous in
// memory, and vector permutes to gather them with), known at compile time.
template <typename C, typename A>
inline constexpr bool rows_in_memory = [] {
  if constexpr (kVectorStridedLanes && std::is_same_v<C, float> && A::has_ptr && !RunLoader<A, C>)
    return std::is_same_v<typename A::value_type, float>;
  return false;
}();

// The largest padded plane (values) whose phases are gathered from the input rows: the gather
// walks the plane once per phase and 16-column block, which stays in L1 for small planes
// only; larger ones stage each row once and split it (measured: EfficientViT's 256 x 256
// stride-2 depthwise planes ran 1.7x slower gathered).
inline constexpr int64_t kRowsGatheredPlane = 64 * 64;

// stage_window_phases() over rows in memory, at a stride of 1 or 2 along them.
template <typename A>
void phases_from_rows(const A& in, const PlaneAt& at, const WindowPhases& p, float fill,
                      float* phases) {
  const int64_t phase = p.hq * p.wq;
  auto input_row = [&](int64_t a, int64_t y) { // -1: a padding row
    const int64_t row = y * p.sh + a, hy = row - at.pad_top;
    return row >= p.hp || hy < 0 || hy >= at.h ? int64_t(-1) : hy;
  };
  for (int64_t a = 0; a < p.sh; ++a)
    for (int64_t b = 0; b < p.sw; ++b) {
      float* dst = phases + (a * p.sw + b) * phase;
      for (int64_t y = 0; y < p.hq; ++y)
        if (input_row(a, y) < 0) std::fill(dst + y * p.wq, dst + (y + 1) * p.wq, fill);
      const int64_t columns = (p.wp - b + p.sw - 1) / p.sw; // inside the padded plane
      for (int64_t x = 0; x < p.wq; x += 16) {
        const StridedLanes lanes(at.w, x * p.sw + b - at.pad_left, int(p.sw),
                                 int(std::min<int64_t>(16, p.wq - x)),
                                 int(std::clamp<int64_t>(columns - x, 0, 16)), fill);
        for (int64_t y = 0; y < p.hq; ++y)
          if (const int64_t hy = input_row(a, y); hy >= 0)
            lanes.gather(in.ptr(Index<4>{at.n, at.c, hy, 0}), dst + y * p.wq + x);
      }
    }
  std::fill(phases + p.sh * p.sw * phase, phases + p.size, fill);
}

// The padded input plane `at` split into the stride phases `p`, in `phases` (p.size values):
// `fill` for padding, in the slack and past each phase row's columns.
template <typename C, typename A>
void stage_window_phases(const A& in, const PlaneAt& at, const WindowPhases& p, C fill, C* phases) {
  if constexpr (rows_in_memory<C, A>) {
    if (p.sw <= 2 && run_contiguous<A>(0, at.w) && p.hp * p.wp <= kRowsGatheredPlane)
      return phases_from_rows(in, at, p, fill, phases);
  }
  C* plane = p.one_phase() ? phases : scratch<C, 13>(p.hp * p.wp);
  stage_padded_rows(in, at, -at.pad_top, p.hp, p.wp, fill, plane);
  split_phases(p, plane, phases, fill);
}

} // namespace vtc::kernels
