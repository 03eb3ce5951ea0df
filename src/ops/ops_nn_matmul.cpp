// Matrix products: MatMul (numpy semantics: batch dims broadcast, a 1-D left operand is a row
// vector and a 1-D right operand a column vector, both dropped from the result) and Gemm
// (alpha * op(A) * op(B) + beta * C, C broadcast to [M, N]). Floats accumulate in double;
// integers in wrapping int64.
#include <algorithm>

#include "ops/ops_nn_common.h"

namespace vtc::nn {
namespace {

// MatMul operand shapes promoted to rank >= 2, and the result shape.
struct MatMulShapes {
  Shape a, b;      // rank >= 2 each
  Shape batch;     // broadcast batch dims
  int64_t n, k, m; // [n, k] x [k, m]
  Shape out;       // batch + [n] (unless A is 1-D) + [m] (unless B is 1-D)
};

MatMulShapes matmul_shapes(const Node& node, const Shape& a_in, const Shape& b_in) {
  VTC_CHECK(!a_in.empty() && !b_in.empty())
      << node.describe() << ": operands must have rank >= 1, got " << shape_str(a_in) << " and "
      << shape_str(b_in);
  MatMulShapes s;
  s.a = a_in.size() == 1 ? Shape{1, a_in[0]} : a_in;
  s.b = b_in.size() == 1 ? Shape{b_in[0], 1} : b_in;
  s.n = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.m = s.b.back();
  VTC_CHECK(s.b[s.b.size() - 2] == s.k)
      << node.describe() << ": inner dimensions of " << shape_str(a_in) << " and "
      << shape_str(b_in) << " differ";
  s.batch =
      broadcast_shapes(node, Shape(s.a.begin(), s.a.end() - 2), Shape(s.b.begin(), s.b.end() - 2));
  s.out = s.batch;
  if (a_in.size() > 1) s.out.push_back(s.n);
  if (b_in.size() > 1) s.out.push_back(s.m);
  return s;
}

std::vector<TensorType> infer_matmul(const InferInputs& in) {
  check_input_count(in, 2, 2);
  check_output_count(in.node, 1, 1);
  const TensorType& a = in.type(0);
  const TensorType& b = in.type(1);
  check_numeric(in.node, a, "input A");
  check_same_dtype(in.node, a, b, "input B");
  return {TensorType{a.dtype, matmul_shapes(in.node, a.shape, b.shape).out}};
}

// c[n, m] = a[n, k] * b[k, m], row-major. Each c element sums its k products in order of p;
// the i-p-j loop order only keeps the rows of b streaming.
template <typename V>
void matmul_rows(const V* a, const V* b, V* c, int64_t n, int64_t k, int64_t m) {
  for (int64_t i = 0; i < n; ++i) {
    V* ci = c + i * m;
    std::fill(ci, ci + m, V(0));
    for (int64_t p = 0; p < k; ++p) {
      V av = a[i * k + p];
      const V* bp = b + p * m;
      for (int64_t j = 0; j < m; ++j)
        ci[j] = wrap_add(ci[j], wrap_mul(av, bp[j]));
    }
  }
}

template <typename V>
void matmul_kernel(const MatMulShapes& s, const Tensor& a_t, const Tensor& b_t, Tensor& out) {
  std::vector<V> a = load_values<V>(a_t), b = load_values<V>(b_t);
  std::vector<V> c(size_t(out.numel()));
  Shape a_batch(s.a.begin(), s.a.end() - 2), b_batch(s.b.begin(), s.b.end() - 2);
  std::vector<int64_t> a_map = broadcast_index_map(s.batch, a_batch);
  std::vector<int64_t> b_map = broadcast_index_map(s.batch, b_batch);
  for (size_t bi = 0; bi < a_map.size(); ++bi)
    matmul_rows(a.data() + a_map[bi] * s.n * s.k, b.data() + b_map[bi] * s.k * s.m,
                c.data() + int64_t(bi) * s.n * s.m, s.n, s.k, s.m);
  store_values(out, c);
}

std::vector<Tensor> eval_matmul(const Node& node, const std::vector<const Tensor*>& in) {
  MatMulShapes s = matmul_shapes(node, in[0]->shape(), in[1]->shape());
  Tensor out(node.outputs[0]->type);
  if (is_float(out.dtype()))
    matmul_kernel<double>(s, *in[0], *in[1], out);
  else
    matmul_kernel<int64_t>(s, *in[0], *in[1], out);
  std::vector<Tensor> r;
  r.push_back(std::move(out));
  return r;
}

// Gemm: [M, K] x [K, N] after the optional transposes.
struct GemmShapes {
  int64_t m, k, n;
};

GemmShapes gemm_shapes(const Node& node, const Shape& a, const Shape& b) {
  VTC_CHECK(a.size() == 2 && b.size() == 2)
      << node.describe() << ": A " << shape_str(a) << " and B " << shape_str(b) << " must be 2-D";
  bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  GemmShapes s{ta ? a[1] : a[0], ta ? a[0] : a[1], tb ? b[0] : b[1]};
  int64_t kb = tb ? b[1] : b[0];
  VTC_CHECK(kb == s.k) << node.describe() << ": inner dimensions of A " << shape_str(a)
                       << (ta ? " (transposed)" : "") << " and B " << shape_str(b)
                       << (tb ? " (transposed)" : "") << " differ";
  return s;
}

std::vector<TensorType> infer_gemm(const InferInputs& in) {
  check_input_count(in, 2, 3);
  check_output_count(in.node, 1, 1);
  const TensorType& a = in.type(0);
  const TensorType& b = in.type(1);
  check_numeric(in.node, a, "input A");
  check_same_dtype(in.node, a, b, "input B");
  GemmShapes s = gemm_shapes(in.node, a.shape, b.shape);
  Shape out{s.m, s.n};
  if (in.has(2)) {
    const TensorType& c = in.type(2);
    check_same_dtype(in.node, a, c, "input C");
    VTC_CHECK(broadcasts_onto(c.shape, out)) << in.node.describe() << ": C " << shape_str(c.shape)
                                             << " does not broadcast to " << shape_str(out);
  }
  return {TensorType{a.dtype, out}};
}

template <typename V>
void gemm_kernel(const Node& node, const GemmShapes& s, const std::vector<const Tensor*>& in,
                 Tensor& out) {
  bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  double alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
  std::vector<V> a = load_values<V>(*in[0]), b = load_values<V>(*in[1]);
  std::vector<V> c;
  std::vector<int64_t> c_map;
  if (in.size() > 2 && in[2]) {
    c = load_values<V>(*in[2]);
    c_map = broadcast_index_map(out.shape(), in[2]->shape());
  }
  // op(A) as [M, K] and op(B) as [K, N], row-major.
  std::vector<V> a_rm(size_t(s.m * s.k)), b_rm(size_t(s.k * s.n));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t p = 0; p < s.k; ++p)
      a_rm[size_t(i * s.k + p)] = ta ? a[size_t(p * s.m + i)] : a[size_t(i * s.k + p)];
  for (int64_t p = 0; p < s.k; ++p)
    for (int64_t j = 0; j < s.n; ++j)
      b_rm[size_t(p * s.n + j)] = tb ? b[size_t(j * s.k + p)] : b[size_t(p * s.n + j)];
  std::vector<V> y(size_t(out.numel()));
  matmul_rows(a_rm.data(), b_rm.data(), y.data(), s.m, s.k, s.n);
  for (size_t o = 0; o < y.size(); ++o) {
    V acc = y[o];
    if constexpr (std::is_same_v<V, double>) {
      y[o] = alpha * acc + (c.empty() ? 0.0 : beta * c[size_t(c_map[o])]);
    } else {
      // Integer Gemm: alpha and beta other than 1 are applied in double and truncated.
      V bias = c.empty() ? V(0) : c[size_t(c_map[o])];
      y[o] = alpha == 1.0 && beta == 1.0 ? wrap_add(acc, bias)
                                         : f64_to_i64(alpha * double(acc) + beta * double(bias));
    }
  }
  store_values(out, y);
}

std::vector<Tensor> eval_gemm(const Node& node, const std::vector<const Tensor*>& in) {
  GemmShapes s = gemm_shapes(node, in[0]->shape(), in[1]->shape());
  Tensor out(node.outputs[0]->type);
  if (is_float(out.dtype()))
    gemm_kernel<double>(node, s, in, out);
  else
    gemm_kernel<int64_t>(node, s, in, out);
  std::vector<Tensor> r;
  r.push_back(std::move(out));
  return r;
}

} // namespace

void register_matmul_ops(OpTable& t) {
  t.add(OpDef{"MatMul", OpKind::compute, infer_matmul, eval_matmul});
  t.add(OpDef{"Gemm", OpKind::compute, infer_gemm, eval_gemm});
}

} // namespace vtc::nn
