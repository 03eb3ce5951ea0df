// The neural-network compute op family: registers the ops of every ops_nn_*.cpp file and
// implements the helpers they share (ops_nn_common.h): element access, checks, the
// outer x axis x inner view and the sliding-window geometry of convolution and pooling.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/ops_nn_common.h"

namespace vtc {

void register_nn_ops(OpTable& t) {
  nn::register_matmul_ops(t);
  nn::register_conv_ops(t);
  nn::register_pool_ops(t);
  nn::register_norm_ops(t);
  nn::register_softmax_ops(t);
  nn::register_reduce_ops(t);
  nn::register_scan_ops(t);
  nn::register_resize_ops(t);
}

namespace nn {

std::vector<double> load_f64(const Tensor& t) {
  std::vector<double> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    v[size_t(i)] = t.get_f64(i);
  return v;
}

std::vector<int64_t> load_i64(const Tensor& t) {
  std::vector<int64_t> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    v[size_t(i)] = t.get_i64(i);
  return v;
}

void store_f64(Tensor& t, const std::vector<double>& v) {
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_f64(i, v[size_t(i)]);
}

void store_i64(Tensor& t, const std::vector<int64_t>& v) {
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_i64(i, v[size_t(i)]);
}

int64_t f64_to_i64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

void check_float(const Node& node, const TensorType& t, const char* what) {
  VTC_CHECK(is_float(t.dtype)) << node.describe() << ": " << what << " must be a float tensor, got "
                               << type_str(t);
}

void check_numeric(const Node& node, const TensorType& t, const char* what) {
  VTC_CHECK(t.dtype != DType::boolean)
      << node.describe() << ": " << what << " must be numeric, got " << type_str(t);
}

void check_same_dtype(const Node& node, const TensorType& a, const TensorType& b,
                      const char* what_b) {
  VTC_CHECK(a.dtype == b.dtype) << node.describe() << ": " << what_b << " is " << type_str(b)
                                << " but the first input is " << type_str(a);
}

void check_rank_at_least(const Node& node, const TensorType& t, int rank, const char* what) {
  VTC_CHECK(t.rank() >= rank) << node.describe() << ": " << what << " must have rank >= " << rank
                              << ", got " << type_str(t);
}

void check_input_count(const InferInputs& in, size_t min, size_t max) {
  size_t n = in.size();
  while (n > 0 && !in.has(n - 1))
    --n; // trailing omitted optional inputs do not count
  VTC_CHECK(n >= min && n <= max) << in.node.describe() << ": expects " << min << " to " << max
                                  << " inputs, got " << n;
  for (size_t i = 0; i < min; ++i)
    VTC_CHECK(in.has(i)) << in.node.describe() << ": required input " << i << " is missing";
}

void check_output_count(const Node& node, size_t min, size_t max) {
  VTC_CHECK(node.outputs.size() >= min && node.outputs.size() <= max)
      << node.describe() << ": expects " << min << " to " << max << " outputs, got "
      << node.outputs.size();
  VTC_CHECK(node.output(0)) << node.describe() << ": the first output must be present";
}

DType dtype_from_onnx(const Node& node, int64_t code, const char* what) {
  switch (code) {
  case 1:
    return DType::f32;
  case 2:
    return DType::u8;
  case 3:
    return DType::i8;
  case 6:
    return DType::i32;
  case 7:
    return DType::i64;
  case 9:
    return DType::boolean;
  case 10:
    return DType::f16;
  case 11:
    return DType::f64;
  case 16:
    return DType::bf16;
  }
  VTC_FAIL() << node.describe() << ": " << what << " " << code << " is not a supported data type";
}

void next_index(std::vector<int64_t>& idx, const Shape& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}

AxisView axis_view(const Shape& s, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < int64_t(s.size()); ++d) {
    if (d < axis)
      v.outer *= s[size_t(d)];
    else if (d == axis)
      v.len = s[size_t(d)];
    else
      v.inner *= s[size_t(d)];
  }
  return v;
}

bool broadcasts_onto(const Shape& s, const Shape& target) {
  if (s.size() > target.size()) return false;
  size_t lead = target.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d)
    if (s[d] != 1 && s[d] != target[d + lead]) return false;
  return true;
}

std::vector<int64_t> broadcast_index_map(const Shape& out, const Shape& in) {
  size_t r = out.size(), lead = r - in.size();
  Shape in_strides = shape_strides(in);
  std::vector<int64_t> map(size_t(shape_numel(out)));
  std::vector<int64_t> idx(r, 0);
  for (size_t i = 0; i < map.size(); ++i) {
    int64_t off = 0;
    for (size_t d = lead; d < r; ++d)
      if (in[d - lead] != 1) off += idx[d] * in_strides[d - lead];
    map[i] = off;
    next_index(idx, out);
  }
  return map;
}

Window make_window(const Node& node, const Shape& in, const Shape& kernel, bool allow_ceil_mode) {
  size_t r = in.size();
  VTC_CHECK(kernel.size() == r) << node.describe() << ": kernel " << shape_str(kernel)
                                << " does not match the spatial shape " << shape_str(in);
  Window w;
  w.in = in;
  w.kernel = kernel;
  w.strides = node.attr_ints("strides", Shape(r, 1));
  w.dilations = node.attr_ints("dilations", Shape(r, 1));
  Shape pads = node.attr_ints("pads", Shape(2 * r, 0));
  VTC_CHECK(w.strides.size() == r && w.dilations.size() == r && pads.size() == 2 * r)
      << node.describe() << ": strides " << shape_str(w.strides) << ", dilations "
      << shape_str(w.dilations) << " and pads " << shape_str(pads) << " do not match " << r
      << " spatial dims";
  std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  int64_t ceil_mode = allow_ceil_mode ? node.attr_int("ceil_mode", 0) : 0;
  w.pad_begin.resize(r);
  w.pad_end.resize(r);
  w.out.resize(r);
  for (size_t d = 0; d < r; ++d) {
    int64_t k = kernel[d], s = w.strides[d], dil = w.dilations[d];
    VTC_CHECK(k > 0 && s > 0 && dil > 0 && pads[d] >= 0 && pads[d + r] >= 0)
        << node.describe() << ": kernel " << shape_str(kernel) << ", strides "
        << shape_str(w.strides) << ", dilations " << shape_str(w.dilations) << ", pads "
        << shape_str(pads) << " must be positive (pads non-negative)";
    int64_t span = (k - 1) * dil + 1;
    if (auto_pad == "NOTSET" || auto_pad.empty()) {
      w.pad_begin[d] = pads[d];
      w.pad_end[d] = pads[d + r];
      int64_t room = in[d] + pads[d] + pads[d + r] - span;
      VTC_CHECK(room >= 0) << node.describe() << ": window of " << span
                           << " does not fit spatial dim " << d << " of " << shape_str(in)
                           << " with pads " << shape_str(pads);
      w.out[d] = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
      // A last window that would start in the end padding is dropped (PyTorch, ONNX >= 1.16).
      if (ceil_mode && (w.out[d] - 1) * s >= in[d] + pads[d]) --w.out[d];
    } else if (auto_pad == "VALID") {
      VTC_CHECK(in[d] >= span) << node.describe() << ": window of " << span
                               << " does not fit spatial dim " << d << " of " << shape_str(in);
      w.pad_begin[d] = w.pad_end[d] = 0;
      w.out[d] = (in[d] - span) / s + 1;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[d] = (in[d] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (w.out[d] - 1) * s + span - in[d]);
      w.pad_begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[d] = total - w.pad_begin[d];
    } else {
      VTC_FAIL() << node.describe() << ": unsupported auto_pad '" << auto_pad << "'";
    }
  }
  return w;
}

void for_each_window(const Window& w,
                     const std::function<void(int64_t, const std::vector<Tap>&, int64_t)>& fn) {
  size_t r = w.in.size();
  int64_t kernel_numel = w.kernel_numel(), out_numel = w.out_numel();
  std::vector<int64_t> o(r, 0), k(r, 0);
  std::vector<Tap> taps;
  taps.reserve(size_t(kernel_numel));
  for (int64_t op = 0; op < out_numel; ++op) {
    taps.clear();
    int64_t padded = 0;
    std::fill(k.begin(), k.end(), 0);
    for (int64_t kp = 0; kp < kernel_numel; ++kp) {
      bool inside = true, in_padded = true;
      int64_t ip = 0;
      for (size_t d = 0; d < r; ++d) {
        int64_t x = o[d] * w.strides[d] - w.pad_begin[d] + k[d] * w.dilations[d];
        inside = inside && x >= 0 && x < w.in[d];
        in_padded = in_padded && x >= -w.pad_begin[d] && x < w.in[d] + w.pad_end[d];
        ip = ip * w.in[d] + x;
      }
      if (inside) taps.push_back({kp, ip});
      if (in_padded) ++padded;
      next_index(k, w.kernel);
    }
    fn(op, taps, padded);
    next_index(o, w.out);
  }
}

} // namespace nn
} // namespace vtc
