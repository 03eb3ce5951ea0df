// Resize's sampling, shared by the reference interpreter and the code generators: for every
// dimension and every output coordinate along it, the input indices it reads and their weights
// (its taps), under the op's mode (nearest with its rounding, linear, cubic with cubic_coeff_a and
// exclude_outside) and coordinate transformation, or that it lies outside tf_crop_and_resize's
// roi (the output is then extrapolation_value). Interpolation is separable: an output element is
// the sum, over every combination of one tap per dimension, of the product of their weights times
// the input element they name. A dimension that is not resized has one tap of weight 1.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace vtc {

struct ResizeTaps {
  Shape out;
  // taps[d][o]: (input index, weight) of output coordinate o along dimension d.
  std::vector<std::vector<std::vector<std::pair<int64_t, double>>>> taps;
  // outside[d][o]: coordinate o lies outside the roi (tf_crop_and_resize).
  std::vector<std::vector<bool>> outside;
  double extrapolation = 0;
};

// The taps of Resize `node` over input shape `in`; roi, scales and sizes are its inputs (null or
// empty where not given). Throws, naming the node, on a form the op does not define.
ResizeTaps resize_taps(const Node& node, const Shape& in, const Tensor* roi, const Tensor* scales,
                       const Tensor* sizes);

// The output shape alone (no roi needed): what shape inference gives.
Shape resize_output_shape(const Node& node, const Shape& in, const Tensor* scales,
                          const Tensor* sizes);

// Where Resize `node` keeps its scales and sizes: the opset-10 form has (X, scales), later forms
// (X, roi, scales, sizes).
size_t resize_scales_input(const Node& node);
bool resize_has_roi_input(const Node& node);
inline constexpr size_t kResizeSizesInput = 3;

} // namespace vtc
