// The naive double-precision convolution the kernel tests compare against: every output's sum
// (bias first) and the sum of its terms' magnitudes, the scale of the rounding a float chain
// over those terms may carry.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/conv_shape.h"

namespace vtc::kernels::test {

// ref[f] = bias[co] + sum over (ci, r, q) of w * x at output f of shape s (groups, strides,
// dilations, pads; reads outside the input skipped), scale[f] the same sum of magnitudes.
template <typename T>
void reference_conv(const Tensor<T, 4>& x, const Tensor<T, 4>& w, const Tensor<T, 1>& bias,
                    const Conv2dShape& s, std::vector<double>& ref, std::vector<double>& scale) {
  const int64_t cin_g = s.c_in / s.groups, cout_g = s.c_out / s.groups;
  const Index<4> ys = {s.n, s.c_out, s.h_out, s.w_out};
  ref.assign(size_t(volume<4>(ys)), 0.0);
  scale.assign(ref.size(), 0.0);
  for (int64_t f = 0; f < volume<4>(ys); ++f) {
    const Index<4> o = unflatten<4>(ys, f);
    const int64_t g = o[1] / cout_g;
    double acc = bias.at({o[1]}), mag = std::abs(acc);
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t r = 0; r < s.kh; ++r)
        for (int64_t q = 0; q < s.kw; ++q) {
          const int64_t hy = o[2] * s.stride_h - s.pad_top + r * s.dil_h;
          const int64_t wx = o[3] * s.stride_w - s.pad_left + q * s.dil_w;
          if (hy < 0 || hy >= s.h || wx < 0 || wx >= s.w) continue;
          const double p = w.at({o[1], ci, r, q}) * x.at({o[0], g * cin_g + ci, hy, wx});
          acc += p;
          mag += std::abs(p);
        }
    ref[size_t(f)] = acc;
    scale[size_t(f)] = mag;
  }
}

} // namespace vtc::kernels::test
