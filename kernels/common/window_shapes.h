// The shapes of 2-D window ops as every target's kernels take them: a convolution
// (Conv2dShape) and a pooling window (Pool2dShape), NCHW. Plain aggregates, so code
// generation writes them as `Conv2dShape{...}` literals in any dialect.
#pragma once

#include "portable.h"

namespace vtc::kernels {

struct Conv2dShape {
  int64_t n = 1, c_in = 1, h = 1, w = 1;   // input [n, c_in, h, w]
  int64_t c_out = 1, h_out = 1, w_out = 1; // output [n, c_out, h_out, w_out]
  int64_t kh = 1, kw = 1;                  // weight [c_out, c_in / groups, kh, kw]
  int64_t groups = 1;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_top = 0, pad_left = 0;
};

// A convolution that is a product per image: 1 x 1, stride 1, no padding or dilation, one
// group.
VTC_HD constexpr bool pointwise_conv2d(const Conv2dShape& c) {
  return c.kh == 1 && c.kw == 1 && c.stride_h == 1 && c.stride_w == 1 && c.dil_h == 1 &&
         c.dil_w == 1 && c.pad_top == 0 && c.pad_left == 0 && c.groups == 1 && c.h_out == c.h &&
         c.w_out == c.w;
}

struct Pool2dShape {
  int64_t n = 1, c = 1, h = 1, w = 1; // input [n, c, h, w]
  int64_t h_out = 1, w_out = 1;       // output [n, c, h_out, w_out]
  int64_t kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

} // namespace vtc::kernels
