// Convolutions over 1 to 3 (or more) spatial dims: Conv (groups, depthwise included, strides,
// dilations, explicit pads or auto_pad, optional bias) and ConvTranspose (the adjoint: each
// input element scatters its kernel into the output; output_padding, output_shape, auto_pad).
// Accumulation is in double, in a fixed order, with one rounding per output element.
#include "ops/ops_nn_common.h"

namespace vtc::nn {
namespace {

Shape spatial(const Shape& s) {
  return Shape(s.begin() + 2, s.end());
}

// Checks shared by Conv and ConvTranspose: X is [N, C, spatial...], W has the same rank and
// dtype and kernel_shape (when given) matches W.
void check_conv_operands(const InferInputs& in) {
  const Node& node = in.node;
  const TensorType& x = in.type(0);
  const TensorType& w = in.type(1);
  check_float(node, x, "input X");
  check_same_dtype(node, x, w, "weights W");
  check_rank_at_least(node, x, 3, "input X");
  VTC_CHECK(w.rank() == x.rank()) << node.describe() << ": weights " << type_str(w) << " and input "
                                  << type_str(x) << " differ in rank";
  if (node.has_attr("kernel_shape"))
    VTC_CHECK(node.attr_ints("kernel_shape") == spatial(w.shape))
        << node.describe() << ": kernel_shape " << shape_str(node.attr_ints("kernel_shape"))
        << " does not match weights " << shape_str(w.shape);
}

// B, when given, is [M] of the input's dtype.
void check_bias(const InferInputs& in, int64_t m) {
  if (!in.has(2)) return;
  const TensorType& b = in.type(2);
  check_same_dtype(in.node, in.type(0), b, "bias B");
  VTC_CHECK(b.shape == Shape{m}) << in.node.describe() << ": bias " << type_str(b) << " must be ["
                                 << m << "]";
}

int64_t group_of(const Node& node) {
  int64_t g = node.attr_int("group", 1);
  VTC_CHECK(g > 0) << node.describe() << ": group " << g << " must be positive";
  return g;
}

// ---- Conv: X [N, C, in...], W [M, C/group, k...], B [M] -> Y [N, M, out...]

Window conv_window(const Node& node, const Shape& x, const Shape& w) {
  int64_t g = group_of(node);
  VTC_CHECK(x[1] == w[1] * g) << node.describe() << ": input " << shape_str(x) << " has " << x[1]
                              << " channels but weights " << shape_str(w) << " with group " << g
                              << " expect " << w[1] * g;
  VTC_CHECK(w[0] % g == 0) << node.describe() << ": " << w[0]
                           << " output channels are not divisible by group " << g;
  return make_window(node, spatial(x), spatial(w), false);
}

std::vector<TensorType> infer_conv(const InferInputs& in) {
  check_input_count(in, 2, 3);
  check_output_count(in.node, 1, 1);
  check_conv_operands(in);
  check_bias(in, in.type(1).shape[0]);
  const TensorType& x = in.type(0);
  Window w = conv_window(in.node, x.shape, in.type(1).shape);
  Shape out{x.shape[0], in.type(1).shape[0]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return {TensorType{x.dtype, out}};
}

std::vector<Tensor> eval_conv(const Node& node, const std::vector<const Tensor*>& in) {
  const Shape& xs = in[0]->shape();
  const Shape& ws = in[1]->shape();
  Window win = conv_window(node, xs, ws);
  int64_t n_batch = xs[0], c_in = xs[1], m_out = ws[0], g = group_of(node);
  int64_t cg = c_in / g, mg = m_out / g;
  int64_t in_n = win.in_numel(), k_n = win.kernel_numel(), out_n = win.out_numel();
  std::vector<double> x = load_f64(*in[0]), w = load_f64(*in[1]);
  std::vector<double> bias = in.size() > 2 && in[2] ? load_f64(*in[2]) : std::vector<double>();
  Tensor out(node.outputs[0]->type);
  std::vector<double> y(size_t(out.numel()));
  for_each_window(win, [&](int64_t op, const std::vector<Tap>& taps, int64_t) {
    for (int64_t n = 0; n < n_batch; ++n)
      for (int64_t m = 0; m < m_out; ++m) {
        int64_t grp = m / mg;
        double acc = bias.empty() ? 0.0 : bias[size_t(m)];
        for (int64_t ic = 0; ic < cg; ++ic) {
          const double* xp = x.data() + (n * c_in + grp * cg + ic) * in_n;
          const double* wp = w.data() + (m * cg + ic) * k_n;
          for (const Tap& t : taps)
            acc += xp[t.in_pos] * wp[t.kernel_pos];
        }
        y[size_t((n * m_out + m) * out_n + op)] = acc;
      }
  });
  store_f64(out, y);
  std::vector<Tensor> r;
  r.push_back(std::move(out));
  return r;
}

// ---- ConvTranspose: X [N, C, in...], W [C, M/group, k...], B [M] -> Y [N, M, out...]

struct TransposeGeometry {
  Shape in, kernel, strides, dilations, pad_begin, out;
};

TransposeGeometry transpose_geometry(const Node& node, const Shape& x, const Shape& w) {
  int64_t g = group_of(node);
  VTC_CHECK(x[1] == w[0] && w[0] % g == 0)
      << node.describe() << ": input " << shape_str(x) << " and weights " << shape_str(w)
      << " with group " << g << " disagree on input channels";
  size_t r = x.size() - 2;
  TransposeGeometry t;
  t.in = spatial(x);
  t.kernel = spatial(w);
  t.strides = node.attr_ints("strides", Shape(r, 1));
  t.dilations = node.attr_ints("dilations", Shape(r, 1));
  Shape out_pad = node.attr_ints("output_padding", Shape(r, 0));
  Shape pads = node.attr_ints("pads", Shape(2 * r, 0));
  Shape out_shape = node.attr_ints("output_shape", {});
  if (out_shape.size() == r + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  VTC_CHECK(t.strides.size() == r && t.dilations.size() == r && out_pad.size() == r &&
            pads.size() == 2 * r && (out_shape.empty() || out_shape.size() == r))
      << node.describe() << ": strides, dilations, output_padding, pads or output_shape do "
      << "not match " << r << " spatial dims";
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  VTC_CHECK(same || auto_pad == "NOTSET" || auto_pad == "VALID" || auto_pad.empty())
      << node.describe() << ": unsupported auto_pad '" << auto_pad << "'";
  t.pad_begin.resize(r);
  t.out.resize(r);
  for (size_t d = 0; d < r; ++d) {
    int64_t s = t.strides[d], dil = t.dilations[d];
    VTC_CHECK(s > 0 && dil > 0 && t.kernel[d] > 0 && out_pad[d] >= 0)
        << node.describe() << ": strides, dilations and kernel must be positive";
    int64_t full = s * (t.in[d] - 1) + out_pad[d] + (t.kernel[d] - 1) * dil + 1;
    if (!out_shape.empty() || same) {
      t.out[d] = out_shape.empty() ? t.in[d] * s : out_shape[d];
      if (!same && node.has_attr("pads")) {
        t.pad_begin[d] = pads[d];
      } else {
        int64_t total = full - t.out[d];
        int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); // floor(total / 2)
        t.pad_begin[d] = auto_pad == "SAME_UPPER" ? half : total - half;
      }
    } else {
      t.pad_begin[d] = auto_pad == "VALID" ? 0 : pads[d];
      t.out[d] = full - (auto_pad == "VALID" ? 0 : pads[d] + pads[d + r]);
    }
    VTC_CHECK(t.out[d] > 0) << node.describe() << ": output spatial dim " << d << " would be "
                            << t.out[d];
  }
  return t;
}

std::vector<TensorType> infer_conv_transpose(const InferInputs& in) {
  check_input_count(in, 2, 3);
  check_output_count(in.node, 1, 1);
  const TensorType& x = in.type(0);
  const TensorType& w = in.type(1);
  check_conv_operands(in);
  check_bias(in, w.shape[1] * group_of(in.node));
  TransposeGeometry t = transpose_geometry(in.node, x.shape, w.shape);
  Shape out{x.shape[0], w.shape[1] * group_of(in.node)};
  out.insert(out.end(), t.out.begin(), t.out.end());
  return {TensorType{x.dtype, out}};
}

std::vector<Tensor> eval_conv_transpose(const Node& node, const std::vector<const Tensor*>& in) {
  const Shape& xs = in[0]->shape();
  const Shape& ws = in[1]->shape();
  TransposeGeometry t = transpose_geometry(node, xs, ws);
  size_t r = t.in.size();
  int64_t g = group_of(node), n_batch = xs[0], c_in = xs[1], mg = ws[1], m_out = mg * g;
  int64_t cg = c_in / g;
  int64_t in_n = shape_numel(t.in), k_n = shape_numel(t.kernel), out_n = shape_numel(t.out);
  // For every (input position, kernel position) the output position it lands on, or -1.
  std::vector<int64_t> target(size_t(in_n * k_n), -1);
  std::vector<int64_t> i_idx(r, 0), k_idx(r, 0);
  for (int64_t ip = 0; ip < in_n; ++ip) {
    std::fill(k_idx.begin(), k_idx.end(), 0);
    for (int64_t kp = 0; kp < k_n; ++kp) {
      int64_t op = 0;
      bool inside = true;
      for (size_t d = 0; d < r; ++d) {
        int64_t o = i_idx[d] * t.strides[d] - t.pad_begin[d] + k_idx[d] * t.dilations[d];
        inside = inside && o >= 0 && o < t.out[d];
        op = op * t.out[d] + o;
      }
      if (inside) target[size_t(ip * k_n + kp)] = op;
      next_index(k_idx, t.kernel);
    }
    next_index(i_idx, t.in);
  }
  std::vector<double> x = load_f64(*in[0]), w = load_f64(*in[1]);
  Tensor out(node.outputs[0]->type);
  std::vector<double> y(size_t(out.numel()), 0.0);
  if (in.size() > 2 && in[2]) {
    std::vector<double> bias = load_f64(*in[2]);
    for (int64_t i = 0; i < out.numel(); ++i)
      y[size_t(i)] = bias[size_t((i / out_n) % m_out)];
  }
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t c = 0; c < c_in; ++c) {
      int64_t grp = c / cg;
      for (int64_t oc = 0; oc < mg; ++oc) {
        double* yp = y.data() + (n * m_out + grp * mg + oc) * out_n;
        const double* wp = w.data() + (c * mg + oc) * k_n;
        for (int64_t ip = 0; ip < in_n; ++ip) {
          double xv = x[size_t((n * c_in + c) * in_n + ip)];
          for (int64_t kp = 0; kp < k_n; ++kp) {
            int64_t op = target[size_t(ip * k_n + kp)];
            if (op >= 0) yp[op] += xv * wp[kp];
          }
        }
      }
    }
  store_f64(out, y);
  std::vector<Tensor> res;
  res.push_back(std::move(out));
  return res;
}

} // namespace

void register_conv_ops(OpTable& t) {
  t.add(OpDef{"Conv", OpKind::compute, infer_conv, eval_conv});
  t.add(OpDef{"ConvTranspose", OpKind::compute, infer_conv_transpose, eval_conv_transpose});
}

} // namespace vtc::nn
