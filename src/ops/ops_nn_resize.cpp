// Resize (opset 10 to 19 forms): modes nearest (round_prefer_floor, round_prefer_ceil, floor,
// ceil), linear and cubic (cubic_coeff_a, exclude_outside); coordinate transformations
// half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn and tf_crop_and_resize (roi, extrapolation_value); output size from
// scales or sizes (keep_aspect_ratio_policy, axes). Interpolation is separable: each output
// element is a weighted sum over the per-dim taps, computed in double and rounded once, which
// is what the ONNX reference implementation computes.
#include <cmath>
#include <limits>

#include "ops/ops_nn_common.h"

namespace vtc::nn {
namespace {

// The opset-10 form has two inputs (X, scales); later forms are (X, roi, scales, sizes).
bool is_opset10_form(const Node& node) {
  return node.num_inputs() == 2;
}
size_t scales_input(const Node& node) {
  return is_opset10_form(node) ? 1 : 2;
}
const size_t kSizesInput = 3;

// Per-dim scale (output length / input length as used by the coordinate transforms) and the
// output shape.
struct ResizePlan {
  std::vector<double> scales;
  Shape out;
};

// An output element needs at least one input element to interpolate from.
void check_not_empty(const Node& node, const Shape& in, const ResizePlan& p) {
  for (size_t d = 0; d < p.out.size(); ++d)
    VTC_CHECK(p.out[d] == 0 || in[d] > 0)
        << node.describe() << ": cannot resize an empty dim " << d << " to " << p.out[d];
}

ResizePlan resize_plan(const Node& node, const Shape& in, const Tensor* scales,
                       const Tensor* sizes) {
  size_t r = in.size();
  VTC_CHECK(r > 0) << node.describe() << ": cannot resize a scalar";
  std::vector<int64_t> axes = node.attr_ints("axes", {});
  if (axes.empty())
    for (size_t d = 0; d < r; ++d)
      axes.push_back(int64_t(d));
  std::vector<bool> seen(r, false);
  for (int64_t& a : axes) {
    a = normalize_axis(node, a, int64_t(r));
    VTC_CHECK(!seen[size_t(a)]) << node.describe() << ": axis " << a << " appears twice in axes";
    seen[size_t(a)] = true;
  }
  ResizePlan p{std::vector<double>(r, 1.0), in};
  if (sizes && sizes->numel() > 0) {
    VTC_CHECK(!scales || scales->numel() == 0)
        << node.describe() << ": only one of scales and sizes may be given";
    std::vector<int64_t> sz = sizes->to_i64_vector();
    VTC_CHECK(sz.size() == axes.size())
        << node.describe() << ": sizes has " << sz.size() << " values for " << axes.size()
        << " axes of input " << shape_str(in);
    std::string policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
    for (size_t i = 0; i < axes.size(); ++i) {
      VTC_CHECK(sz[i] >= 0) << node.describe() << ": negative size " << sz[i];
      size_t d = size_t(axes[i]);
      p.out[d] = sz[i];
      p.scales[d] = double(sz[i]) / double(in[d]);
    }
    if (policy != "stretch") {
      VTC_CHECK(policy == "not_larger" || policy == "not_smaller")
          << node.describe() << ": unsupported keep_aspect_ratio_policy '" << policy << "'";
      double s = p.scales[size_t(axes[0])];
      for (int64_t a : axes)
        s = policy == "not_larger" ? std::min(s, p.scales[size_t(a)])
                                   : std::max(s, p.scales[size_t(a)]);
      for (int64_t a : axes) {
        p.scales[size_t(a)] = s;
        p.out[size_t(a)] = int64_t(s * double(in[size_t(a)]) + 0.5);
      }
    }
    check_not_empty(node, in, p);
    return p;
  }
  VTC_CHECK(scales && scales->numel() > 0)
      << node.describe() << ": one of scales and sizes must be given";
  VTC_CHECK(is_float(scales->dtype()))
      << node.describe() << ": scales must be float, got " << type_str(scales->type());
  VTC_CHECK(size_t(scales->numel()) == axes.size())
      << node.describe() << ": scales has " << scales->numel() << " values for " << axes.size()
      << " axes of input " << shape_str(in);
  for (size_t i = 0; i < axes.size(); ++i) {
    double s = scales->get_f64(int64_t(i));
    VTC_CHECK(s > 0) << node.describe() << ": scale " << s << " must be positive";
    size_t d = size_t(axes[i]);
    p.scales[d] = s;
    p.out[d] = int64_t(std::floor(s * double(in[d])));
  }
  check_not_empty(node, in, p);
  return p;
}

std::vector<TensorType> infer_resize(const InferInputs& in) {
  const Node& node = in.node;
  check_input_count(in, 1, 4);
  check_output_count(node, 1, 1);
  const TensorType& x = in.type(0);
  check_numeric(node, x, "input X");
  const Tensor* sizes = nullptr;
  std::vector<int64_t> size_values;
  Tensor sizes_tensor;
  if (!is_opset10_form(node) && in.has(kSizesInput) && in.type(kSizesInput).numel() > 0) {
    size_values = in.ints(kSizesInput);
    sizes_tensor = Tensor::from<int64_t>({int64_t(size_values.size())}, size_values);
    sizes = &sizes_tensor;
  }
  size_t si = scales_input(node);
  const Tensor* scales = nullptr;
  if (!sizes && in.has(si)) {
    scales = in.constant(si);
    if (!scales)
      throw NeedsConstantInput(node.describe() + ": scales must be a constant (static shapes only)",
                               int(si));
  }
  return {TensorType{x.dtype, resize_plan(node, x.shape, scales, sizes).out}};
}

// Interpolation taps of one output coordinate along one dim.
struct Taps {
  std::vector<std::pair<int64_t, double>> taps; // (input index, weight)
  bool extrapolate = false;                     // tf_crop_and_resize outside the roi
};

struct Settings {
  std::string mode, transform, nearest;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

std::vector<double> cubic_coeffs(double r, double a) {
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
          ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a};
}

Taps taps_for(const Node& node, const Settings& s, int64_t x, int64_t in_len, int64_t out_len,
              double scale, double roi_start, double roi_end) {
  Taps t;
  double out_width = scale * double(in_len); // non-integral when scales do not divide evenly
  double xf = double(x), x_ori = 0;
  const std::string& m = s.transform;
  if (m == "half_pixel") {
    x_ori = (xf + 0.5) / scale - 0.5;
  } else if (m == "half_pixel_symmetric") {
    double adjustment = double(out_len) / out_width;
    double offset = double(in_len) / 2 * (1 - adjustment);
    x_ori = offset + (xf + 0.5) / scale - 0.5;
  } else if (m == "pytorch_half_pixel") {
    x_ori = out_width == 1 ? -0.5 : (xf + 0.5) / scale - 0.5;
  } else if (m == "align_corners") {
    x_ori = out_width == 1 ? 0.0 : xf * double(in_len - 1) / (out_width - 1);
  } else if (m == "asymmetric") {
    x_ori = xf / scale;
  } else if (m == "tf_half_pixel_for_nn") {
    x_ori = (xf + 0.5) / scale;
  } else if (m == "tf_crop_and_resize") {
    x_ori = out_width == 1 ? (roi_end - roi_start) * double(in_len - 1) / 2
                           : xf * (roi_end - roi_start) * double(in_len - 1) / (out_width - 1);
    x_ori += roi_start * double(in_len - 1);
    if (x_ori < 0 || x_ori > double(in_len - 1)) t.extrapolate = true;
  } else {
    VTC_UNSUPPORTED() << node.describe() << ": coordinate_transformation_mode '" << m << "'";
  }
  auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in_len - 1); };
  double fl = std::floor(x_ori);
  int64_t base = int64_t(fl);
  double frac = x_ori - fl;
  if (frac == 0) {
    t.taps.push_back({clamp(base), 1.0});
    return t;
  }
  if (s.mode == "nearest") {
    bool up = s.nearest == "round_prefer_floor"  ? frac > 0.5
              : s.nearest == "round_prefer_ceil" ? frac >= 0.5
                                                 : s.nearest == "ceil";
    t.taps.push_back({clamp(up ? base + 1 : base), 1.0});
    return t;
  }
  std::vector<double> w =
      s.mode == "linear" ? std::vector<double>{1 - frac, frac} : cubic_coeffs(frac, s.cubic_a);
  int64_t first = s.mode == "linear" ? base : base - 1;
  if (s.exclude_outside) {
    double sum = 0;
    for (size_t j = 0; j < w.size(); ++j) {
      int64_t i = first + int64_t(j);
      if (i < 0 || i >= in_len) w[j] = 0;
      sum += w[j];
    }
    if (sum != 0)
      for (double& v : w)
        v /= sum;
  }
  for (size_t j = 0; j < w.size(); ++j)
    if (w[j] != 0) t.taps.push_back({clamp(first + int64_t(j)), w[j]});
  return t;
}

Settings read_settings(const Node& node) {
  Settings s;
  bool v10 = is_opset10_form(node);
  s.mode = node.attr_string("mode", "nearest");
  s.transform =
      node.attr_string("coordinate_transformation_mode", v10 ? "asymmetric" : "half_pixel");
  s.nearest = node.attr_string("nearest_mode", v10 ? "floor" : "round_prefer_floor");
  s.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  s.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  VTC_CHECK(s.mode == "nearest" || s.mode == "linear" || s.mode == "cubic")
      << node.describe() << ": unsupported mode '" << s.mode << "'";
  VTC_CHECK(s.nearest == "round_prefer_floor" || s.nearest == "round_prefer_ceil" ||
            s.nearest == "floor" || s.nearest == "ceil")
      << node.describe() << ": unsupported nearest_mode '" << s.nearest << "'";
  if (node.attr_int("antialias", 0) != 0) VTC_UNSUPPORTED() << node.describe() << ": antialias=1";
  return s;
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
  Settings s = read_settings(node);
  size_t si = scales_input(node);
  const Tensor* scales = in.size() > si ? in[si] : nullptr;
  const Tensor* sizes =
      !is_opset10_form(node) && in.size() > kSizesInput ? in[kSizesInput] : nullptr;
  ResizePlan plan = resize_plan(node, x.shape(), scales, sizes);
  size_t r = size_t(x.rank());
  // roi: [starts..., ends...] over all dims or over `axes`.
  std::vector<double> roi_start(r, 0.0), roi_end(r, 1.0);
  if (s.transform == "tf_crop_and_resize") {
    VTC_CHECK(!is_opset10_form(node) && in[1] && in[1]->numel() > 0)
        << node.describe() << ": tf_crop_and_resize needs the roi input";
    std::vector<int64_t> axes = node.attr_ints("axes", {});
    if (axes.empty())
      for (size_t d = 0; d < r; ++d)
        axes.push_back(int64_t(d));
    VTC_CHECK(size_t(in[1]->numel()) == 2 * axes.size())
        << node.describe() << ": roi has " << in[1]->numel() << " values, expected "
        << 2 * axes.size();
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t d = size_t(normalize_axis(node, axes[i], int64_t(r)));
      roi_start[d] = in[1]->get_f64(int64_t(i));
      roi_end[d] = in[1]->get_f64(int64_t(i + axes.size()));
    }
  }
  const Shape& xs = x.shape();
  std::vector<std::vector<Taps>> taps(r);
  for (size_t d = 0; d < r; ++d) {
    bool identity =
        plan.scales[d] == 1.0 && plan.out[d] == xs[d] && roi_start[d] == 0.0 && roi_end[d] == 1.0;
    for (int64_t o = 0; o < plan.out[d]; ++o)
      taps[d].push_back(identity ? Taps{{{o, 1.0}}, false}
                                 : taps_for(node, s, o, xs[d], plan.out[d], plan.scales[d],
                                            roi_start[d], roi_end[d]));
  }
  double extrapolation = node.attr_float("extrapolation_value", 0.0f);
  std::vector<double> xv = load_f64(x);
  Shape in_strides = shape_strides(xs);
  Tensor out(node.outputs[0]->type);
  std::vector<int64_t> oidx(r, 0), pick(r, 0);
  for (int64_t e = 0; e < out.numel(); ++e) {
    bool extrapolate = false;
    for (size_t d = 0; d < r; ++d)
      extrapolate = extrapolate || taps[d][size_t(oidx[d])].extrapolate;
    double acc = extrapolation;
    if (!extrapolate) {
      // Sum over every combination of one tap per dim.
      acc = 0;
      std::fill(pick.begin(), pick.end(), 0);
      for (bool more = true; more;) {
        double w = 1;
        int64_t off = 0;
        for (size_t d = 0; d < r; ++d) {
          const auto& tap = taps[d][size_t(oidx[d])].taps[size_t(pick[d])];
          w *= tap.second;
          off += tap.first * in_strides[d];
        }
        acc += w * xv[size_t(off)];
        more = false;
        for (size_t d = r; d-- > 0;) {
          if (++pick[d] < int64_t(taps[d][size_t(oidx[d])].taps.size())) {
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
    next_index(oidx, plan.out);
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
