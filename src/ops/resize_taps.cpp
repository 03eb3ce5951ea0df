// Resize's taps per dimension and output coordinate (resize_taps.h): the output size from
// scales or sizes (keep_aspect_ratio_policy, axes) and the coordinate rules of the ONNX reference
// implementation.
#include "ops/resize_taps.h"

#include <cmath>
#include <string>

#include "ops/op_registry.h"

namespace vtc {

namespace {

// The opset-10 form has two inputs (X, scales); later forms are (X, roi, scales, sizes).
bool is_opset10_form(const Node& node) {
  return node.num_inputs() == 2;
}

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

} // namespace

Shape resize_output_shape(const Node& node, const Shape& in, const Tensor* scales,
                          const Tensor* sizes) {
  return resize_plan(node, in, scales, sizes).out;
}

size_t resize_scales_input(const Node& node) {
  return is_opset10_form(node) ? 1 : 2;
}

bool resize_has_roi_input(const Node& node) {
  return !is_opset10_form(node);
}

ResizeTaps resize_taps(const Node& node, const Shape& xs, const Tensor* roi, const Tensor* scales,
                       const Tensor* sizes) {
  Settings s = read_settings(node);
  ResizePlan plan = resize_plan(node, xs, scales, sizes);
  size_t r = xs.size();
  // roi: [starts..., ends...] over all dims or over `axes`.
  std::vector<double> roi_start(r, 0.0), roi_end(r, 1.0);
  if (s.transform == "tf_crop_and_resize") {
    VTC_CHECK(roi && roi->numel() > 0)
        << node.describe() << ": tf_crop_and_resize needs the roi input";
    std::vector<int64_t> axes = node.attr_ints("axes", {});
    if (axes.empty())
      for (size_t d = 0; d < r; ++d)
        axes.push_back(int64_t(d));
    VTC_CHECK(size_t(roi->numel()) == 2 * axes.size())
        << node.describe() << ": roi has " << roi->numel() << " values, expected "
        << 2 * axes.size();
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t d = size_t(normalize_axis(node, axes[i], int64_t(r)));
      roi_start[d] = roi->get_f64(int64_t(i));
      roi_end[d] = roi->get_f64(int64_t(i + axes.size()));
    }
  }
  ResizeTaps t;
  t.out = plan.out;
  t.extrapolation = node.attr_float("extrapolation_value", 0.0f);
  t.taps.resize(r);
  t.outside.resize(r);
  for (size_t d = 0; d < r; ++d) {
    bool identity =
        plan.scales[d] == 1.0 && plan.out[d] == xs[d] && roi_start[d] == 0.0 && roi_end[d] == 1.0;
    for (int64_t o = 0; o < plan.out[d]; ++o) {
      Taps one = identity ? Taps{{{o, 1.0}}, false}
                          : taps_for(node, s, o, xs[d], plan.out[d], plan.scales[d], roi_start[d],
                                     roi_end[d]);
      t.taps[d].push_back(std::move(one.taps));
      t.outside[d].push_back(one.extrapolate);
    }
  }
  return t;
}

} // namespace vtc
