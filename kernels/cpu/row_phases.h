// One row of a window op (a convolution's input row, a pooling's input row) split into its
// stride phases, so that each filter column's values for a run of outputs lie contiguous:
// output x of tap q reads row[x * stride + q * dil - pad], which is phase (q * dil - pad) mod
// stride at column x + floor((q * dil - pad) / stride). Each phase sits `margin` values into
// its stretch of the buffer, with `fill` (zero for a convolution's padding, -inf for max
// pooling's) before and after it. Values move unchanged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stage.h"

namespace vtc::kernels {

class RowPhases {
public:
  RowPhases() = default;
  // A row of w values, read by `columns` outputs (any number; reads run to the next whole
  // `vector`) through taps q < k at the given stride, dilation and left padding.
  RowPhases(int64_t w, int64_t columns, int64_t k, int64_t stride, int64_t dil, int64_t pad,
            int64_t vector)
      : stride_(stride) {
    const int64_t padded = (columns + vector - 1) / vector * vector;
    std::vector<int64_t> phase, shift;
    int64_t d_min = 0, d_max = 0;
    for (int64_t q = 0; q < k; ++q) {
      const int64_t off = q * dil - pad;
      const int64_t d = off >= 0 ? off / stride : -((-off + stride - 1) / stride);
      phase.push_back(off - d * stride);
      shift.push_back(d);
      d_min = std::min(d_min, d);
      d_max = std::max(d_max, d);
    }
    margin_ = -d_min;
    for (int64_t p = 0; p < stride; ++p)
      lengths_.push_back(p < w ? (w - p + stride - 1) / stride : 0);
    phase_len_ = margin_ + std::max(lengths_[0], padded + d_max);
    for (size_t q = 0; q < phase.size(); ++q)
      offsets_.push_back(phase[q] * phase_len_ + margin_ + shift[q]);
  }

  int64_t buffer_size() const { return stride_ * phase_len_; }
  // The phases of row[0 .. w) into buf, `fill` around them.
  template <typename C> void split(const C* row, C fill, C* buf) const {
    for (int64_t p = 0; p < stride_; ++p) {
      C* phase = buf + p * phase_len_;
      const int64_t len = lengths_[size_t(p)];
      std::fill(phase, phase + margin_, fill);
      copy_strided(row + p, stride_, len, phase + margin_);
      std::fill(phase + margin_ + len, phase + phase_len_, fill);
    }
  }
  // Where tap q's values for outputs 0, 1, ... begin in buf.
  int64_t tap(int64_t q) const { return offsets_[size_t(q)]; }
  int64_t taps() const { return int64_t(offsets_.size()); }

private:
  int64_t stride_ = 1, margin_ = 0, phase_len_ = 0;
  std::vector<int64_t> lengths_; // values per phase
  std::vector<int64_t> offsets_; // per tap
};

} // namespace vtc::kernels
