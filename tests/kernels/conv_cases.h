// Convolution shapes for the kernel tests: a case as a row of numbers (n, channels, plane,
// filter, groups, strides, dilations, pads), the Conv2dShape it makes, and its description.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "kernels/cpu/conv_shape.h"

namespace vtc::kernels::test {

struct ConvCase {
  int64_t n, c_in, h, w, c_out, kh, kw, groups, sh, sw, dh, dw, pt, pl, pb, pr;
};

constexpr Conv2dShape conv_shape(const ConvCase& c) {
  const int64_t h_out = (c.h + c.pt + c.pb - ((c.kh - 1) * c.dh + 1)) / c.sh + 1;
  const int64_t w_out = (c.w + c.pl + c.pr - ((c.kw - 1) * c.dw + 1)) / c.sw + 1;
  return {c.n,  c.c_in,   c.h,  c.w,  c.c_out, h_out, w_out, c.kh,
          c.kw, c.groups, c.sh, c.sw, c.dh,    c.dw,  c.pt,  c.pl};
}

inline std::string describe(const ConvCase& c) {
  std::ostringstream o;
  o << "conv n" << c.n << " cin" << c.c_in << " " << c.h << "x" << c.w << " cout" << c.c_out << " k"
    << c.kh << "x" << c.kw << " g" << c.groups << " s" << c.sh << "," << c.sw << " d" << c.dh << ","
    << c.dw << " p" << c.pt << "," << c.pl << "," << c.pb << "," << c.pr;
  return o.str();
}

} // namespace vtc::kernels::test
