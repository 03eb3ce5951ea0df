// Resize (opset 10 to 19 forms), its shapes and its reference evaluation over the taps of
// resize_taps.h: modes nearest (round_prefer_floor, round_prefer_ceil, floor,
// ceil), linear and cubic (cubic_coeff_a, exclude_outside); coordinate transformations
// half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn and tf_crop_and_resize (roi, extrapolation_value); output size from
// scales or sizes (keep_aspect_ratio_policy, axes). Interpolation is separable: each output
// element is a weighted sum over the per-dim taps, computed in double and rounded once, which
// is what the ONNX reference implementation computes.
#include <cmath>
#include <limits>

#include "ops/ops_nn_common.h"
#include "ops/resize_taps.h"

namespace vtc::nn {
namespace {

std::vector<TensorType> infer_resize(const InferInputs& in) {
  const Node& node = in.node;
  check_input_count(in, 1, 4);
  check_output_count(node, 1, 1);
  const TensorType& x = in.type(0);
  check_numeric(node, x, "input X");
  const Tensor* sizes = nullptr;
  std::vector<int64_t> size_values;
  Tensor sizes_tensor;
  if (resize_has_roi_input(node) && in.has(kResizeSizesInput) &&
      in.type(kResizeSizesInput).numel() > 0) {
    size_values = in.ints(kResizeSizesInput);
    sizes_tensor = Tensor::from<int64_t>({int64_t(size_values.size())}, size_values);
    sizes = &sizes_tensor;
  }
  size_t si = resize_scales_input(node);
  const Tensor* scales = nullptr;
  if (!sizes && in.has(si)) {
    scales = in.constant(si);
    if (!scales)
      throw NeedsConstantInput(node.describe() + ": scales must be a constant (static shapes only)",
                               int(si));
  }
  return {TensorType{x.dtype, resize_output_shape(node, x.shape, scales, sizes)}};
}

// Stores v into element i of an integer tensor the way the ONNX reference casts: round half
// to even, then saturate to the type's range.
void store_rounded(Tensor& t, int64_t i, double v) {
  double lo = 0, hi = 0;
  switch (t.dtype()) {
  case DType::i8:
    lo = -128, hi = 127;
    break;
  case DType::u8:
    lo = 0, hi = 255;
    break;
  case DType::i32:
    lo = -2147483648.0, hi = 2147483647.0;
    break;
  case DType::i64:
  case DType::f32:
  case DType::f16:
  case DType::bf16:
  case DType::f64:
  case DType::boolean:
    t.set_i64(i, f64_to_i64(std::nearbyint(v)));
    return;
  }
  t.set_i64(i, int64_t(std::isnan(v) ? 0 : std::min(std::max(std::nearbyint(v), lo), hi)));
}

std::vector<Tensor> eval_resize(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  size_t si = resize_scales_input(node);
  const Tensor* scales = in.size() > si ? in[si] : nullptr;
  const bool v11 = resize_has_roi_input(node);
  const Tensor* sizes = v11 && in.size() > kResizeSizesInput ? in[kResizeSizesInput] : nullptr;
  const Tensor* roi = v11 && in.size() > 1 ? in[1] : nullptr;
  ResizeTaps taps = resize_taps(node, x.shape(), roi, scales, sizes);
  size_t r = size_t(x.rank());
  const Shape& xs = x.shape();
  std::vector<double> xv = load_f64(x);
  Shape in_strides = shape_strides(xs);
  Tensor out(node.outputs[0]->type);
  std::vector<int64_t> oidx(r, 0), pick(r, 0);
  for (int64_t e = 0; e < out.numel(); ++e) {
    bool extrapolate = false;
    for (size_t d = 0; d < r; ++d)
      extrapolate = extrapolate || taps.outside[d][size_t(oidx[d])];
    double acc = taps.extrapolation;
    if (!extrapolate) {
      // Sum over every combination of one tap per dim.
      acc = 0;
      std::fill(pick.begin(), pick.end(), 0);
      for (bool more = true; more;) {
        double w = 1;
        int64_t off = 0;
        for (size_t d = 0; d < r; ++d) {
          const auto& tap = taps.taps[d][size_t(oidx[d])][size_t(pick[d])];
          w *= tap.second;
          off += tap.first * in_strides[d];
        }
        acc += w * xv[size_t(off)];
        more = false;
        for (size_t d = r; d-- > 0;) {
          if (++pick[d] < int64_t(taps.taps[d][size_t(oidx[d])].size())) {
            more = true;
            break;
          }
          pick[d] = 0;
        }
      }
    }
    if (is_float(out.dtype()))
      out.set_f64(e, acc);
    else
      store_rounded(out, e, acc);
    next_index(oidx, taps.out);
  }
  std::vector<Tensor> res;
  res.push_back(std::move(out));
  return res;
}

} // namespace

void register_resize_ops(OpTable& t) {
  t.add(OpDef{"Resize", OpKind::compute, infer_resize, eval_resize});
}

} // namespace vtc::nn
