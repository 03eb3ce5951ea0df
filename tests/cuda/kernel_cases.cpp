#include "kernel_cases.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

#include "kernels/common/scalar_types.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/conv.h"
#include "kernels/cuda/conv_direct.h"
#include "kernels/cuda/decode_attention_mma.h"
#include "kernels/cuda/decode_attention_stream_tc.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemm_tc.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/gemv_tc.h"
#include "kernels/cuda/library_epilogue.h"
#include "kernels/cuda/library_prologue.h"
#include "kernels/cuda/pointwise_tc.h"
#include "kernels/cuda/pool.h"
#include "kernels/cuda/prefill_attention.h"
#include "kernels/cuda/reduce.h"
#include "kernels/cuda/resize.h"

namespace vtc::cuda_test {

namespace k = vtc::kernels;

const char* dtype_name(DType t) {
  switch (t) {
  case DType::f32:
    return "f32";
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  }
  return "?";
}

const char* cpp_type(DType t) {
  switch (t) {
  case DType::f32:
    return "float";
  case DType::f16:
    return "half";
  case DType::bf16:
    return "bfloat16";
  }
  return "?";
}

size_t dtype_bytes(DType t) {
  return t == DType::f32 ? 4 : 2;
}

void store_value(DType t, float v, unsigned char* dst) {
  switch (t) {
  case DType::f32:
    std::memcpy(dst, &v, 4);
    return;
  case DType::f16: {
    const uint16_t b = k::float_to_half(v);
    std::memcpy(dst, &b, 2);
    return;
  }
  case DType::bf16: {
    const uint16_t b = k::float_to_bf16(v);
    std::memcpy(dst, &b, 2);
    return;
  }
  }
}

float load_value(DType t, const unsigned char* src) {
  float f = 0;
  uint16_t b = 0;
  switch (t) {
  case DType::f32:
    std::memcpy(&f, src, 4);
    return f;
  case DType::f16:
    std::memcpy(&b, src, 2);
    return k::half_to_float(b);
  case DType::bf16:
    std::memcpy(&b, src, 2);
    return k::bf16_to_float(b);
  }
  return f;
}

float round_to(DType t, float v) {
  unsigned char b[4];
  store_value(t, v, b);
  return load_value(t, b);
}

const char* layout_name(Layout l) {
  switch (l) {
  case Layout::dense:
    return "dense";
  case Layout::transposed:
    return "transposed";
  case Layout::concat:
    return "concat";
  case Layout::concat_last:
    return "concat_last";
  case Layout::computed:
    return "computed";
  case Layout::channels_last:
    return "channels_last";
  }
  return "?";
}

namespace {

std::vector<int64_t> row_major(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t n = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = n;
    n *= shape[d];
  }
  return s;
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n *= e;
  return n;
}

std::string list(const std::vector<int64_t>& xs) {
  std::string s = "{";
  for (size_t i = 0; i < xs.size(); ++i)
    s += (i ? ", " : "") + std::to_string(xs[i]);
  return s + "}";
}

// Calls fn(flat, index) for every index of `shape` in row-major order.
template <typename F> void for_each_index(const std::vector<int64_t>& shape, F&& fn) {
  const int64_t n = product(shape);
  std::vector<int64_t> i(shape.size(), 0);
  for (int64_t f = 0; f < n; ++f) {
    fn(f, i);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++i[d] < shape[d]) break;
      i[d] = 0;
    }
  }
}

int64_t dot(const std::vector<int64_t>& i, const std::vector<int64_t>& s) {
  int64_t o = 0;
  for (size_t d = 0; d < i.size(); ++d)
    o += i[d] * s[d];
  return o;
}

// Buffer (0 or 1) and element offset of logical index i.
std::pair<int, int64_t> locate(const Operand& op, std::vector<int64_t> i) {
  if ((op.layout == Layout::concat || op.layout == Layout::concat_last) && op.split > 0) {
    if (i[size_t(op.dim)] < op.split) return {0, dot(i, op.strides0)};
    i[size_t(op.dim)] -= op.split;
    return {1, dot(i, op.strides1)};
  }
  return {0, dot(i, op.strides0)};
}

} // namespace

int64_t Operand::numel() const {
  return product(shape);
}

Operand make_operand(DType t, std::vector<int64_t> shape, Layout l) {
  Operand op;
  op.dtype = t;
  op.shape = shape;
  const int r = int(shape.size());
  // Layouts that need more dimensions, or longer ones, than the shape has fall back to dense.
  if (l == Layout::transposed && r < 2) l = Layout::dense;
  if (l == Layout::concat && (r < 2 || shape[size_t(r - 2)] < 2)) l = Layout::dense;
  if (l == Layout::concat_last && (r < 1 || shape[size_t(r - 1)] < 2)) l = Layout::dense;
  if (l == Layout::channels_last && r != 4) l = Layout::dense;
  op.layout = l;
  switch (l) {
  case Layout::dense:
  case Layout::computed:
    op.strides0 = row_major(shape);
    op.elems0 = product(shape);
    break;
  case Layout::channels_last: {
    const std::vector<int64_t> ps = row_major({shape[0], shape[2], shape[3], shape[1]});
    op.strides0 = {ps[0], ps[3], ps[1], ps[2]};
    op.contig = 1;
    op.elems0 = product(shape);
    break;
  }
  case Layout::transposed: {
    std::vector<int64_t> phys = shape;
    std::swap(phys[size_t(r - 1)], phys[size_t(r - 2)]);
    std::vector<int64_t> ps = row_major(phys);
    op.strides0 = ps;
    std::swap(op.strides0[size_t(r - 1)], op.strides0[size_t(r - 2)]);
    op.contig = 1;
    op.elems0 = product(shape);
    break;
  }
  case Layout::concat:
  case Layout::concat_last: {
    op.dim = l == Layout::concat ? r - 2 : r - 1;
    const int64_t e = shape[size_t(op.dim)];
    if (l == Layout::concat_last && e >= 16) {
      op.split = e / 2 / 8 * 8;
      op.contig = 8;
    } else {
      op.split = e / 2;
      op.contig = l == Layout::concat ? int64_t(1) << 30 : 1;
    }
    std::vector<int64_t> s0 = shape, s1 = shape;
    s0[size_t(op.dim)] = op.split;
    s1[size_t(op.dim)] = e - op.split;
    op.strides0 = row_major(s0);
    op.strides1 = row_major(s1);
    op.elems0 = product(s0);
    op.elems1 = product(s1);
    break;
  }
  }
  return op;
}

std::string Operand::accessor(const std::string& p0, const std::string& p1) const {
  const std::string t = cpp_type(dtype), r = std::to_string(shape.size());
  const std::string b0 = "static_cast<" + t + "*>(" + p0 + ")";
  const std::string b1 = "static_cast<" + t + "*>(" + p1 + ")";
  std::string a;
  switch (layout) {
  case Layout::dense:
    a = "Dense<" + t + ", " + r + ">{" + b0 + ", " + list(strides0) + "}";
    break;
  case Layout::transposed:
  case Layout::channels_last:
    a = "Strided<" + t + ", " + r + ", 1>{" + b0 + ", " + list(strides0) + "}";
    break;
  case Layout::concat:
  case Layout::concat_last:
    a = "Concat2<" + t + ", " + r + ", " + std::to_string(dim) + ", " + std::to_string(contig) +
        ">{" + b0 + ", " + b1 + ", " + list(strides0) + ", " + list(strides1) + ", " +
        std::to_string(split) + "}";
    break;
  case Layout::computed:
    a = "Computed<Dense<" + t + ", " + r + ">>{{" + b0 + ", " + list(strides0) + "}}";
    break;
  }
  if (head_group > 0)
    a = "HeadGroups<decltype(" + a + ")>{" + a + ", " + std::to_string(head_group) + "}";
  return a;
}

void Operand::scatter(const std::vector<float>& logical, std::vector<unsigned char>& b0,
                      std::vector<unsigned char>& b1) const {
  const size_t sz = dtype_bytes(dtype);
  b0.assign(size_t(elems0) * sz, 0);
  b1.assign(size_t(elems1) * sz, 0);
  if (layout == Layout::dense || layout == Layout::computed) { // row-major: in order
    for (size_t f = 0; f < logical.size(); ++f)
      store_value(dtype, logical[f], b0.data() + f * sz);
    return;
  }
  for_each_index(shape, [&](int64_t f, const std::vector<int64_t>& i) {
    auto [buf, off] = locate(*this, i);
    store_value(dtype, logical[size_t(f)], (buf ? b1 : b0).data() + size_t(off) * sz);
  });
}

std::vector<float> Operand::gather(const std::vector<unsigned char>& b0,
                                   const std::vector<unsigned char>& b1) const {
  const size_t sz = dtype_bytes(dtype);
  std::vector<float> out(static_cast<size_t>(numel()));
  if (layout == Layout::dense || layout == Layout::computed) {
    for (size_t f = 0; f < out.size(); ++f)
      out[f] = load_value(dtype, b0.data() + f * sz);
    return out;
  }
  for_each_index(shape, [&](int64_t f, const std::vector<int64_t>& i) {
    auto [buf, off] = locate(*this, i);
    out[size_t(f)] = load_value(dtype, (buf ? b1 : b0).data() + size_t(off) * sz);
  });
  return out;
}

std::string translation_unit(const std::vector<Case>& cases) {
  std::ostringstream os;
  os << "#include \"kernels/cuda/attention.h\"\n"
        "#include \"kernels/cuda/conv.h\"\n"
        "#include \"kernels/cuda/conv_direct.h\"\n"
        "#include \"kernels/cuda/decode_attention_mma.h\"\n"
        "#include \"kernels/cuda/decode_attention_stream_tc.h\"\n"
        "#include \"kernels/cuda/elementwise.h\"\n"
        "#include \"kernels/cuda/gemm.h\"\n"
        "#include \"kernels/cuda/gemv.h\"\n"
        "#include \"kernels/cuda/gemv_tc.h\"\n"
        "#include \"kernels/cuda/library_epilogue.h\"\n"
        "#include \"kernels/cuda/library_prologue.h\"\n"
        "#include \"kernels/cuda/norm.h\"\n"
        "#include \"kernels/cuda/pointwise_tc.h\"\n"
        "#include \"kernels/cuda/pool.h\"\n"
        "#include \"kernels/cuda/prefill_attention.h\"\n"
        "#include \"kernels/cuda/reduce.h\"\n"
        "#include \"kernels/cuda/resize.h\"\n"
        "#include \"test_accessors.h\"\n"
        "using namespace vtc::kernels;\n"
        "using namespace vtc::kernels::test;\n\n";
  for (const Case& c : cases) {
    os << "extern \"C\" __global__ void __launch_bounds__("
       << c.launch.block[0] * c.launch.block[1] * c.launch.block[2] << ", " << c.launch.min_blocks
       << ") " << c.name << "(";
    for (size_t i = 0; i < c.ops.size(); ++i)
      os << "void* p" << i << "_0, void* p" << i << "_1, ";
    os << "float* ws) {\n  (void)ws;\n  ";
    std::string call = c.call;
    for (size_t i = c.ops.size(); i-- > 0;) {
      std::string key = "@", p = "p";
      key += std::to_string(i);
      p += std::to_string(i);
      const std::string acc = c.ops[i].accessor(p + "_0", p + "_1");
      for (size_t at; (at = call.find(key)) != std::string::npos;)
        call.replace(at, key.size(), acc);
    }
    os << call << "\n}\n\n";
  }
  return os.str();
}

namespace {

double tolerance(DType t) {
  return t == DType::f32 ? 1e-4 : t == DType::f16 ? 4e-3 : 2e-2;
}

std::string suffix(DType t, Layout in, Layout out) {
  return std::string("_") + dtype_name(t) + "_" + layout_name(in) + "_" + layout_name(out);
}

std::string shape_key(const std::vector<int64_t>& xs) {
  std::string s;
  for (int64_t x : xs) {
    s += '_';
    s += std::to_string(x);
  }
  return s;
}

template <typename... T> std::string lits(T... xs) {
  std::string s;
  ((s += (s.empty() ? "" : ", ") + std::to_string(xs)), ...);
  return s;
}

// A tensor-core plan as the braced literal the kernels take (a_shared only when set).
std::string tc_plan_literal(const k::TcPlan& p) {
  return "{" + lits(p.batch, p.m, p.n, p.k, p.bm, p.bn, p.splits, p.k_tiles) +
         (p.a_shared ? ", true}" : "}");
}

} // namespace

Case copy_case(DType t, Layout in, Layout out, std::vector<int64_t> shape) {
  Case c;
  c.family = "copy";
  c.name = "copy" + suffix(t, in, out);
  c.group = "copy_" + std::string(dtype_name(t)) + shape_key(shape);
  c.ops = {make_operand(t, shape, out), make_operand(t, shape, in)};
  k::MapShape<3> s{{shape[0], shape[1], shape[2]}};
  c.call = "copy(@0, @1, MapShape<3>{{" + lits(shape[0], shape[1], shape[2]) + "}});";
  c.launch = k::copy_launch(s);
  c.bytes = 2.0 * double(product(shape)) * double(dtype_bytes(t));
  c.tol = 0;
  c.ref = [](const Inputs& x, int64_t f) { return double(x[0][size_t(f)]); };
  return c;
}

Case copy_transposed_case(DType t, Layout out, std::vector<int64_t> shape) {
  Case c;
  c.family = "copy_transposed";
  c.name = c.family + suffix(t, Layout::transposed, out);
  c.group = c.family + "_" + std::string(dtype_name(t)) + shape_key(shape);
  c.ops = {make_operand(t, shape, out), make_operand(t, shape, Layout::transposed)};
  k::MapShape<3> s{{shape[0], shape[1], shape[2]}};
  c.call = "copy_transposed<1>(@0, @1, MapShape<3>{{" + lits(shape[0], shape[1], shape[2]) + "}});";
  c.launch = k::copy_transposed_launch(s, 1);
  c.bytes = 2.0 * double(product(shape)) * double(dtype_bytes(t));
  c.tol = 0;
  c.ref = [](const Inputs& x, int64_t f) { return double(x[0][size_t(f)]); };
  return c;
}

Case gemm_case(DType t, Layout in, Layout out, int64_t batch, int64_t m, int64_t n, int64_t kk,
               bool a_shared) {
  Case c;
  const bool tc = t != DType::f32;
  c.family = tc ? "gemm_tc" : "gemm_f32";
  c.name = c.family + suffix(t, in, out);
  c.group = c.family + "_" + dtype_name(t) + shape_key({batch, m, n, kk});
  c.ops = {make_operand(t, {batch, m, n}, out), make_operand(t, {batch, m, kk}, in),
           make_operand(t, {batch, kk, n}, in)};
  const k::GemmShape s{batch, m, n, kk};
  if (tc) {
    k::TcPlan p = k::plan_gemm_tc(batch, m, n, kk);
    p.a_shared = a_shared && batch == 1;
    c.call = "{ const TcPlan p" + tc_plan_literal(p) + ";\n  gemm_tc<" + lits(p.bm, p.bn) +
             ">(@0, @1, @2, tc_workspace(ws, p), p); }";
    c.launch = k::gemm_tc_launch(p);
    c.workspace_bytes = k::gemm_tc_workspace_bytes(p);
  } else if (k::gemm_f32_small_fits(s)) { // as code generation picks it
    c.name = "gemm_f32_small" + suffix(t, in, out);
    const int64_t k_split = k::gemm_f32_small_k_split(s);
    // A stored transposed has its runs along m: staged along them, as code generation does.
    c.call = std::string("gemm_f32_small") + (in == Layout::transposed ? "<true>" : "") +
             "(@0, @1, @2, ws, GemmShape{" + lits(batch, m, n, kk) + "}, " +
             std::to_string(k_split) + ");";
    c.launch = k::gemm_f32_small_launch(s, k_split);
    c.workspace_bytes = k::gemm_f32_small_workspace_bytes(s, k_split);
  } else if (k::gemm_f32_skinny_fits(s)) {
    c.name = "gemm_f32_skinny" + suffix(t, in, out);
    c.call = "gemm_f32_skinny(@0, @1, @2, GemmShape{" + lits(batch, m, n, kk) + "});";
    c.launch = k::gemm_f32_skinny_launch(s);
  } else {
    c.call = c.family + "(@0, @1, @2, GemmShape{" + lits(batch, m, n, kk) + "});";
    c.launch = k::gemm_f32_launch(s);
  }
  c.flops = 2.0 * double(batch * m * n * kk);
  c.bytes = double(batch * (m * kk + kk * n + m * n)) * double(dtype_bytes(t));
  c.tol = tolerance(t);
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t b = f / (m * n), i = f / n % m, j = f % n;
    double acc = 0;
    for (int64_t q = 0; q < kk; ++q)
      acc +=
          double(x[0][size_t((b * m + i) * kk + q)]) * double(x[1][size_t((b * kk + q) * n + j)]);
    return acc;
  };
  return c;
}

// A pointwise convolution's product on pointwise_tc (one image: the weights are every image's).
Case pointwise_case(DType t, Layout in, int64_t m, int64_t n, int64_t kk) {
  Case c = gemm_case(t, in, Layout::dense, 1, m, n, kk);
  c.name = "pointwise_tc" + suffix(t, in, Layout::dense) + "_m" + std::to_string(m) + "k" +
           std::to_string(kk);
  const k::PointwisePlan p{1, m, n, kk};
  c.call = "pointwise_tc<" + lits(k::pointwise_m_tiles(m), k::pointwise_k_steps(kk)) +
           ">(@0, @1, @2, PointwisePlan{" + lits(p.batch, p.m, p.n, p.k) + "});";
  c.launch = k::pointwise_tc_launch(p);
  c.workspace_bytes = 0;
  return c;
}

Case gemv_case(DType t, Layout in, Layout out, int64_t batch, int64_t m, int64_t n, int64_t kk) {
  Case c = gemm_case(t, in, out, batch, m, n, kk);
  c.family = "gemv";
  c.name = "gemv_m" + std::to_string(m) + suffix(t, in, out);
  c.group = "gemv_" + std::string(dtype_name(t)) + shape_key({batch, m, n, kk});
  const k::GemvShape s = k::make_gemv_shape(batch, m, n, kk);
  c.call = "{ const GemvShape s{" + lits(s.batch, s.m, s.n, s.k, s.k_chunk) + "};\n  gemv<" +
           std::to_string(m) + ">(@0, @1, @2, gemv_workspace(ws, s), s); }";
  c.launch = k::gemv_launch(s);
  c.workspace_bytes = k::gemv_workspace_bytes(s);
  return c;
}

Case gemv_tc_case(DType t, Layout in, Layout out, int64_t batch, int64_t m, int64_t n, int64_t kk,
                  int64_t k_chunk) {
  Case c = gemm_case(t, in, out, batch, m, n, kk);
  c.family = "gemv";
  c.name = "gemv_tc_m" + std::to_string(m) + suffix(t, in, out);
  c.group = "gemv_tc_" + std::string(dtype_name(t)) + shape_key({batch, m, n, kk});
  k::GemvShape s = k::make_gemv_tc_shape(batch, m, n, kk);
  if (k_chunk > 0) {
    s.k_chunk = k_chunk;
    c.name += "_chunk" + std::to_string(k_chunk);
    c.group += "_chunk" + std::to_string(k_chunk);
  }
  c.call = "{ const GemvShape s{" + lits(s.batch, s.m, s.n, s.k, s.k_chunk) + "};\n  gemv_tc<" +
           std::to_string(m) + ">(@0, @1, @2, gemv_workspace(ws, s), s); }";
  c.launch = k::gemv_tc_launch(s);
  c.workspace_bytes = k::gemv_workspace_bytes(s);
  return c;
}

namespace {

// One output element of scaled dot-product attention in double precision: the query row at
// x[0][q_at ..], keys and values rows l of one cache head at x[1] / x[2][kv_at + l * d ..],
// keys [0, keys), value column e, an additive mask x[3][mask_at + l] when mask_at >= 0.
double attention_reference(const Inputs& x, int64_t q_at, int64_t kv_at, int64_t keys, int64_t d,
                           int64_t e, double scale, double softcap, int64_t mask_at) {
  std::vector<double> s(static_cast<size_t>(keys));
  double mx = -std::numeric_limits<double>::infinity();
  for (int64_t l = 0; l < keys; ++l) {
    double acc = 0;
    for (int64_t j = 0; j < d; ++j)
      acc += double(x[0][size_t(q_at + j)]) * double(x[1][size_t(kv_at + l * d + j)]);
    acc *= scale;
    if (softcap > 0) acc = softcap * std::tanh(acc / softcap);
    if (mask_at >= 0) acc += double(x[3][size_t(mask_at + l)]);
    s[size_t(l)] = acc;
    mx = std::max(mx, acc);
  }
  double sum = 0, r = 0;
  for (int64_t l = 0; l < keys; ++l) {
    const double p = std::exp(s[size_t(l)] - mx);
    sum += p;
    r += p * double(x[2][size_t(kv_at + l * d + e)]);
  }
  return keys > 0 ? r / sum : 0.0;
}

// The call of a decode attention kernel (`function`<G>, or <G, D> when `with_d`) of shape s in a
// test unit.
std::string decode_attention_call(const std::string& function, const k::DecodeAttentionShape& s,
                                  float scale, float softcap, int64_t valid, bool with_d = false) {
  char lit[96];
  std::snprintf(lit, sizeof lit, "AttentionParams{%.9ef, %.9ef, %lld}", double(scale),
                double(softcap), (long long)valid);
  std::ostringstream call;
  call << "{ const DecodeAttentionShape s{"
       << lits(s.batch, s.heads, s.kv_len, s.d, s.dv, s.group, s.chunk) << "};\n  " << function
       << "<" << s.group << (with_d ? ", " + std::to_string(s.d) : std::string())
       << ">(@0, @1, @2, @3, attention_workspace(ws, s), s, " << lit << "); }";
  return call.str();
}

} // namespace

Case attention_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len, int64_t d,
                    int64_t group, int64_t valid, float softcap) {
  Case c;
  c.family = "decode_attention";
  c.name = "decode_attention_g" + std::to_string(group) + suffix(t, in, Layout::dense);
  c.group = "attention_" + std::string(dtype_name(t)) +
            shape_key({batch, heads, kv_len, d, group, valid});
  const int64_t hkv = heads / group;
  Operand kc = make_operand(t, {batch, hkv, kv_len, d}, in == Layout::concat ? Layout::concat : in);
  Operand vc =
      make_operand(t, {batch, hkv, kv_len, d}, in == Layout::transposed ? Layout::dense : in);
  kc.head_group = vc.head_group = group;
  c.ops = {make_operand(t, {batch, heads, d}), make_operand(t, {batch, heads, d}), kc, vc};
  const k::DecodeAttentionShape s =
      k::make_decode_attention_shape(batch, heads, kv_len, d, d, group);
  const float scale = 1.0f / std::sqrt(float(d));
  c.call = decode_attention_call("decode_attention", s, scale, softcap, valid);
  c.launch = k::decode_attention_launch(s);
  c.workspace_bytes = k::attention_workspace_bytes(s);
  const int64_t keys = valid < 0 ? kv_len : std::min(valid, kv_len);
  c.flops = 4.0 * double(batch * heads * keys * d);
  c.bytes = double(batch * (2 * hkv * keys * d + 2 * heads * d)) * double(dtype_bytes(t));
  c.tol = tolerance(t);
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t b = f / (heads * d), h = f / d % heads, e = f % d, hk = h / group;
    return attention_reference(x, (b * heads + h) * d, (b * hkv + hk) * kv_len * d, keys, d, e,
                               scale, softcap, -1);
  };
  return c;
}

Case attention_tiled_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len,
                          int64_t d, int64_t group, int64_t valid, float softcap) {
  Case c = attention_case(t, in, batch, heads, kv_len, d, group, valid, softcap);
  c.name = "decode_attention_tiled_g" + std::to_string(group) + suffix(t, in, Layout::dense);
  c.group = "attention_tiled_" + std::string(dtype_name(t)) +
            shape_key({batch, heads, kv_len, d, group, valid});
  const k::DecodeAttentionShape s =
      k::make_decode_attention_tiled_shape(batch, heads, kv_len, d, d, group);
  c.call = decode_attention_call("decode_attention_tiled", s, 1.0f / std::sqrt(float(d)), softcap,
                                 valid);
  c.launch = k::decode_attention_tiled_launch(s, int64_t(dtype_bytes(t)));
  c.workspace_bytes = k::attention_workspace_bytes(s);
  return c;
}

Case attention_stream_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len,
                           int64_t d, int64_t group, int64_t valid, float softcap) {
  Case c = attention_case(t, in, batch, heads, kv_len, d, group, valid, softcap);
  c.name = "decode_attention_stream_g" + std::to_string(group) + suffix(t, in, Layout::dense);
  c.group = "attention_stream_" + std::string(dtype_name(t)) +
            shape_key({batch, heads, kv_len, d, group, valid});
  const k::DecodeAttentionShape s =
      k::make_decode_attention_stream_shape(batch, heads, kv_len, d, d, group);
  c.call = decode_attention_call("decode_attention_stream", s, 1.0f / std::sqrt(float(d)), softcap,
                                 valid);
  c.launch = k::decode_attention_stream_launch(s);
  c.workspace_bytes = k::attention_workspace_bytes(s);
  return c;
}

Case attention_stream_tc_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len,
                              int64_t d, int64_t group, int64_t valid, float softcap) {
  Case c = attention_case(t, in, batch, heads, kv_len, d, group, valid, softcap);
  c.name = "decode_attention_stream_tc_g" + std::to_string(group) + suffix(t, in, Layout::dense);
  c.group = "attention_stream_tc_" + std::string(dtype_name(t)) +
            shape_key({batch, heads, kv_len, d, group, valid});
  const k::DecodeAttentionShape s =
      k::make_decode_attention_stream_tc_shape(batch, heads, kv_len, d, d, group);
  c.call = decode_attention_call("decode_attention_stream_tc", s, 1.0f / std::sqrt(float(d)),
                                 softcap, valid, true);
  c.launch = k::decode_attention_stream_tc_launch(s);
  c.workspace_bytes = k::attention_workspace_bytes(s);
  return c;
}

Case attention_mma_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len, int64_t d,
                        int64_t group, int64_t valid, float softcap) {
  Case c = attention_case(t, in, batch, heads, kv_len, d, group, valid, softcap);
  c.name = "decode_attention_mma_g" + std::to_string(group) + suffix(t, in, Layout::dense);
  c.group = "attention_mma_" + std::string(dtype_name(t)) +
            shape_key({batch, heads, kv_len, d, group, valid});
  const k::DecodeAttentionShape s =
      k::make_decode_attention_mma_shape(batch, heads, kv_len, d, d, group);
  c.call =
      decode_attention_call("decode_attention_mma", s, 1.0f / std::sqrt(float(d)), softcap, valid);
  c.launch = k::decode_attention_mma_launch(s);
  c.workspace_bytes = k::attention_workspace_bytes(s);
  return c;
}

Case prefill_attention_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t q_len,
                            int64_t kv_len, int64_t d, int64_t group, float softcap, bool mask) {
  Case c;
  c.family = "prefill_attention";
  c.name = std::string("prefill_attention_g") + std::to_string(group) + (mask ? "_mask" : "") +
           suffix(t, in, Layout::dense);
  c.group = "prefill_attention_" + std::string(dtype_name(t)) +
            shape_key({batch, heads, q_len, kv_len, d, group, mask});
  const int64_t hkv = heads / group;
  Operand kc = make_operand(t, {batch, hkv, kv_len, d}, in == Layout::concat ? Layout::concat : in);
  Operand vc =
      make_operand(t, {batch, hkv, kv_len, d}, in == Layout::transposed ? Layout::dense : in);
  kc.head_group = vc.head_group = group;
  c.ops = {make_operand(t, {batch, heads, q_len, d}), make_operand(t, {batch, heads, q_len, d}), kc,
           vc};
  if (mask) c.ops.push_back(make_operand(t, {batch, heads, q_len, kv_len}));
  const k::PrefillAttentionShape s{batch, heads, q_len, kv_len, d, d};
  const float scale = 1.0f / std::sqrt(float(d));
  char lit[96];
  std::snprintf(lit, sizeof lit, "AttentionParams{%.9ef, %.9ef, -1}", double(scale),
                double(softcap));
  c.call = "prefill_attention(@0, @1, @2, @3, PrefillAttentionShape{" +
           lits(s.batch, s.heads, s.q_len, s.kv_len, s.d, s.dv) + "}, " + lit +
           (mask ? ", @4);" : ");");
  c.launch = k::prefill_attention_launch(s);
  c.flops = 4.0 * double(batch * heads * q_len * kv_len * d);
  c.bytes = double(batch * (2 * hkv * kv_len * d + 2 * heads * q_len * d)) * double(dtype_bytes(t));
  c.tol = tolerance(t);
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t b = f / (heads * q_len * d), h = f / (q_len * d) % heads, tq = f / d % q_len,
                  e = f % d, hk = h / group;
    const int64_t row = (b * heads + h) * q_len + tq;
    return attention_reference(x, row * d, (b * hkv + hk) * kv_len * d, kv_len, d, e, scale,
                               softcap, mask ? row * kv_len : -1);
  };
  return c;
}

Case softmax_case(DType t, Layout in, Layout out, int64_t rows, int64_t d, bool log) {
  Case c;
  c.family = log ? "log_softmax" : "softmax";
  c.name = c.family + suffix(t, in, out);
  c.group = c.family + "_" + dtype_name(t) + shape_key({rows, d});
  c.ops = {make_operand(t, {rows, d}, out), make_operand(t, {rows, d}, in)};
  c.call = c.family + "(@0, @1, RowsShape{" + lits(rows, d) + "});";
  c.launch = k::rows_launch(k::RowsShape{rows, d});
  c.bytes = 2.0 * double(rows * d) * double(dtype_bytes(t));
  c.tol = tolerance(t);
  c.input_range = 4.0f;
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t r = f / d;
    const float* row = x[0].data() + r * d;
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j < d; ++j)
      mx = std::max(mx, double(row[j]));
    for (int64_t j = 0; j < d; ++j)
      sum += std::exp(double(row[j]) - mx);
    const double v = double(row[f % d]);
    return log ? (v - mx) - std::log(sum) : std::exp(v - mx) / sum;
  };
  return c;
}

Case layer_norm_case(DType t, Layout in, Layout out, int64_t rows, int64_t d, bool rms) {
  Case c;
  c.family = rms ? "rms_norm" : "layer_norm";
  c.name = c.family + suffix(t, in, out);
  c.group = c.family + "_" + dtype_name(t) + shape_key({rows, d});
  c.ops = {make_operand(t, {rows, d}, out), make_operand(t, {rows, d}, in), make_operand(t, {d}),
           make_operand(t, {d})};
  c.call = c.family + "(@0, @1, @2, " + (rms ? std::string("NoOperand{}") : "@3") + ", RowsShape{" +
           lits(rows, d) + ", 1e-5f});";
  if (rms) c.ops.pop_back();
  c.launch = k::rows_launch(k::RowsShape{rows, d});
  c.bytes = 2.0 * double(rows * d) * double(dtype_bytes(t));
  c.tol = tolerance(t);
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t r = f / d, j = f % d;
    const float* row = x[0].data() + r * d;
    double mean = 0, var = 0;
    if (!rms) {
      for (int64_t q = 0; q < d; ++q)
        mean += row[q];
      mean /= double(d);
    }
    for (int64_t q = 0; q < d; ++q)
      var += (row[q] - mean) * (row[q] - mean);
    var /= double(d);
    const double y = (row[j] - mean) / std::sqrt(var + 1e-5) * double(x[1][size_t(j)]);
    return rms ? y : y + double(x[2][size_t(j)]);
  };
  return c;
}

Case reduce_case(DType t, Layout in, int64_t rows, int64_t d, const std::string& kind) {
  Case c;
  c.family = "reduce";
  c.name = "reduce_" + kind + suffix(t, in, Layout::dense);
  c.group = "reduce_" + kind + "_" + dtype_name(t) + shape_key({rows, d});
  c.ops = {make_operand(t, {rows}), make_operand(t, {rows, d}, in)};
  c.call = "reduce<ReduceKind::" + kind + ">(@0, @1, RowsShape{" + lits(rows, d) + "});";
  c.launch = k::reduce_launch(k::RowsShape{rows, d});
  c.bytes = double(rows * d + rows) * double(dtype_bytes(t));
  c.tol = tolerance(t);
  c.ref = [=](const Inputs& x, int64_t r) {
    const float* row = x[0].data() + r * d;
    double a = kind == "Max"   ? -std::numeric_limits<double>::infinity()
               : kind == "Min" ? std::numeric_limits<double>::infinity()
                               : 0.0;
    for (int64_t j = 0; j < d; ++j) {
      if (kind == "Max")
        a = std::max(a, double(row[j]));
      else if (kind == "Min")
        a = std::min(a, double(row[j]));
      else if (kind == "SumSquare")
        a += double(row[j]) * row[j];
      else
        a += row[j];
    }
    return kind == "Mean" ? a / double(d) : a;
  };
  return c;
}

namespace {

std::string pool_shape_lit(const k::Pool2dShape& s) {
  return "Pool2dShape{" +
         lits(s.n, s.c, s.h, s.w, s.h_out, s.w_out, s.kh, s.kw, s.stride_h, s.stride_w, s.dil_h,
              s.dil_w, s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) +
         "}";
}

std::string conv_shape_lit(const k::Conv2dShape& s) {
  return "Conv2dShape{" +
         lits(s.n, s.c_in, s.h, s.w, s.c_out, s.h_out, s.w_out, s.kh, s.kw, s.groups, s.stride_h,
              s.stride_w, s.dil_h, s.dil_w, s.pad_top, s.pad_left) +
         "}";
}

// The input value at [n, c, y, x] of an [N, C, H, W] tensor, 0 outside the plane.
double at4(const std::vector<float>& x, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c,
           int64_t y, int64_t xx) {
  if (y < 0 || y >= H || xx < 0 || xx >= W) return 0.0;
  return x[size_t(((n * C + c) * H + y) * W + xx)];
}

} // namespace

Case pool_case(DType t, Layout in, bool max, int64_t n, int64_t ch, int64_t h, int64_t w,
               int64_t kk, int64_t stride, int64_t pad) {
  Case c;
  c.family = max ? "max_pool2d" : "avg_pool2d";
  c.name = c.family + suffix(t, in, Layout::dense);
  const int64_t ho = (h + 2 * pad - kk) / stride + 1, wo = (w + 2 * pad - kk) / stride + 1;
  c.group = c.family + "_" + dtype_name(t) + shape_key({n, ch, h, w, kk, stride, pad});
  const k::Pool2dShape s{n, ch, h, w, ho, wo, kk, kk, stride, stride, 1, 1, pad, pad, pad, pad};
  c.ops = {make_operand(t, {n, ch, ho, wo}), make_operand(t, {n, ch, h, w}, in)};
  c.call = c.family + "(@0, @1, " + pool_shape_lit(s) + (max ? ");" : ", true);");
  c.launch = k::pool2d_launch(s);
  c.bytes = double(n * ch * (h * w + ho * wo)) * double(dtype_bytes(t));
  c.tol = tolerance(t);
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t b = f / (ch * ho * wo), cc = f / (ho * wo) % ch, y = f / wo % ho, xo = f % wo;
    double a = max ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t r = 0; r < kk; ++r)
      for (int64_t q = 0; q < kk; ++q) {
        const int64_t iy = y * stride - pad + r, ix = xo * stride - pad + q;
        if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
        const double v = at4(x[0], ch, h, w, b, cc, iy, ix);
        a = max ? std::max(a, v) : a + v;
      }
    return max ? a : a / double(kk * kk); // count_include_pad, symmetric padding
  };
  return c;
}

Case depthwise_case(DType t, Layout in, int64_t n, int64_t ch, int64_t h, int64_t w, int64_t kk,
                    int64_t stride, int64_t pad) {
  Case c;
  c.family = "depthwise_conv2d";
  c.name = c.family + suffix(t, in, Layout::dense);
  const int64_t ho = (h + 2 * pad - kk) / stride + 1, wo = (w + 2 * pad - kk) / stride + 1;
  c.group = c.family + "_" + dtype_name(t) + shape_key({n, ch, h, w, kk, stride, pad});
  const k::Conv2dShape s{n, ch, h, w, ch, ho, wo, kk, kk, ch, stride, stride, 1, 1, pad, pad};
  c.ops = {make_operand(t, {n, ch, ho, wo}), make_operand(t, {n, ch, h, w}, in),
           make_operand(t, {ch, 1, kk, kk})};
  c.call = "depthwise_conv2d(@0, @1, @2, " + conv_shape_lit(s) + ");";
  c.launch = k::depthwise_conv2d_launch(s);
  c.flops = 2.0 * double(n * ch * ho * wo * kk * kk);
  c.bytes = double(n * ch * (h * w + ho * wo)) * double(dtype_bytes(t));
  c.tol = tolerance(t);
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t b = f / (ch * ho * wo), cc = f / (ho * wo) % ch, y = f / wo % ho, xo = f % wo;
    double a = 0;
    for (int64_t r = 0; r < kk; ++r)
      for (int64_t q = 0; q < kk; ++q)
        a += double(x[1][size_t((cc * kk + r) * kk + q)]) *
             at4(x[0], ch, h, w, b, cc, y * stride - pad + r, xo * stride - pad + q);
    return a;
  };
  return c;
}

Case conv_case(DType t, Layout in, int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t c_out,
               int64_t kk, int64_t stride, int64_t pad, bool direct, Layout out) {
  Case c;
  const bool tc = t != DType::f32;
  c.family = direct ? "conv2d_direct" : tc ? "conv2d_tc" : "conv2d_f32";
  c.name = c.family + suffix(t, in, out);
  const int64_t ho = (h + 2 * pad - kk) / stride + 1, wo = (w + 2 * pad - kk) / stride + 1;
  c.group = c.family + "_" + dtype_name(t) + shape_key({n, c_in, h, w, c_out, kk, stride, pad});
  const k::Conv2dShape s{n, c_in, h, w, c_out, ho, wo, kk, kk, 1, stride, stride, 1, 1, pad, pad};
  const int64_t K = c_in * kk * kk;
  c.ops = {make_operand(t, {n, c_out, ho, wo}, out), make_operand(t, {n, c_in, h, w}, in),
           make_operand(t, {c_out, K})};
  if (direct) {
    c.call = "conv2d_direct<" + lits(c_in, kk, kk) + ">(@0, @1, @2, " + conv_shape_lit(s) + ");";
    c.launch = k::conv2d_direct_launch(s);
  } else if (tc) {
    const k::TcPlan p = k::conv2d_tc_plan(s);
    c.call = "{ const TcPlan p" + tc_plan_literal(p) + ";\n  conv2d_tc<" + lits(p.bm, p.bn) +
             ">(@0, @1, @2, tc_workspace(ws, p), " + conv_shape_lit(s) + ", p); }";
    c.launch = k::gemm_tc_launch(p);
    c.workspace_bytes = k::gemm_tc_workspace_bytes(p);
  } else {
    c.call = c.family + "(@0, @1, @2, " + conv_shape_lit(s) + ");";
    c.launch = k::conv2d_f32_launch(s);
  }
  c.flops = 2.0 * double(n * c_out * ho * wo * K);
  c.bytes = double(n * (c_in * h * w + c_out * ho * wo) + c_out * K) * double(dtype_bytes(t));
  c.tol = tolerance(t);
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t b = f / (c_out * ho * wo), co = f / (ho * wo) % c_out, y = f / wo % ho,
                  xo = f % wo;
    double a = 0;
    for (int64_t ci = 0; ci < c_in; ++ci)
      for (int64_t r = 0; r < kk; ++r)
        for (int64_t q = 0; q < kk; ++q)
          a += double(x[1][size_t(co * K + (ci * kk + r) * kk + q)]) *
               at4(x[0], c_in, h, w, b, ci, y * stride - pad + r, xo * stride - pad + q);
    return a;
  };
  return c;
}

Case upsample_case(DType t, Layout in, Layout out, int64_t n, int64_t ch, int64_t h, int64_t w,
                   int64_t factor) {
  Case c;
  c.family = "upsample_nearest";
  c.name = c.family + suffix(t, in, out);
  c.group = c.family + "_" + dtype_name(t) + shape_key({n, ch, h, w, factor});
  const int64_t ho = h * factor, wo = w * factor;
  c.ops = {make_operand(t, {n, ch, ho, wo}, out), make_operand(t, {n, ch, h, w}, in)};
  const k::UpsampleShape<4> s{{n, ch, ho, wo}, {1, 1, factor, factor}};
  c.call = "upsample_nearest(@0, @1, UpsampleShape<4>{{" + lits(n, ch, ho, wo) + "}, {" +
           lits(int64_t(1), int64_t(1), factor, factor) + "}});";
  c.launch = k::upsample_nearest_launch(s);
  c.bytes = double(n * ch * (h * w + ho * wo)) * double(dtype_bytes(t));
  c.tol = 0;
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t b = f / (ch * ho * wo), cc = f / (ho * wo) % ch, y = f / wo % ho, xo = f % wo;
    return double(x[0][size_t(((b * ch + cc) * h + y / factor) * w + xo / factor)]);
  };
  return c;
}

Case library_epilogue_case(DType t, Layout out, int64_t n, int64_t ch, int64_t h, int64_t w,
                           bool channels_last, bool to_nhwc) {
  Case c;
  c.family = to_nhwc         ? "library_epilogue_to_nhwc"
             : channels_last ? "library_epilogue_nhwc"
                             : "library_epilogue";
  c.name = c.family + suffix(t, Layout::dense, out);
  c.group = c.family + "_" + dtype_name(t) + shape_key({n, ch, h, w});
  const std::vector<int64_t> raw =
      channels_last ? std::vector<int64_t>{n, h, w, ch} : std::vector<int64_t>{n, ch, h, w};
  c.ops = {make_operand(t, {n, ch, h, w}, out), make_operand(t, raw, Layout::dense)};
  const std::string extent = "Index<4>{" + lits(n, ch, h, w) + "}";
  c.call = c.family + "(@0, @1.ptr(Index<4>{}), " + extent + ");";
  c.launch = channels_last && !to_nhwc ? k::channel_tiles_launch(k::Index<4>{n, ch, h, w})
                                       : k::library_epilogue_launch(k::Index<4>{n, ch, h, w});
  c.bytes = 2.0 * double(n * ch * h * w) * double(dtype_bytes(t));
  c.tol = 0;
  c.ref = [=](const Inputs& x, int64_t f) {
    if (!channels_last) return double(x[0][size_t(f)]);
    const int64_t b = f / (ch * h * w), cc = f / (h * w) % ch, y = f / w % h, xo = f % w;
    return double(x[0][size_t(((b * h + y) * w + xo) * ch + cc)]);
  };
  return c;
}

Case library_prologue_case(DType t, Layout in, int64_t n, int64_t ch, int64_t h, int64_t w) {
  Case c;
  c.family = "library_prologue_nhwc";
  c.name = c.family + suffix(t, in, Layout::dense);
  c.group = c.family + "_" + dtype_name(t) + shape_key({n, ch, h, w});
  c.ops = {make_operand(t, {n, h, w, ch}, Layout::dense), make_operand(t, {n, ch, h, w}, in)};
  const std::string extent = "Index<4>{" + lits(n, ch, h, w) + "}";
  c.call = c.family + "(@1, @0.ptr(Index<4>{}), " + extent + ");";
  c.launch = k::channel_tiles_launch(k::Index<4>{n, ch, h, w});
  c.bytes = 2.0 * double(n * ch * h * w) * double(dtype_bytes(t));
  c.tol = 0;
  c.ref = [=](const Inputs& x, int64_t f) {
    const int64_t b = f / (h * w * ch), y = f / (w * ch) % h, xo = f / ch % w, cc = f % ch;
    return double(x[0][size_t(((b * ch + cc) * h + y) * w + xo)]);
  };
  return c;
}

std::vector<CaseFamily> representative_cases() {
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16};
  const Layout ins[] = {Layout::dense, Layout::transposed, Layout::concat, Layout::concat_last,
                        Layout::computed};
  std::vector<Case> copy, gemm, gemv, attention, rows, window, conv;
  for (DType t : dtypes) {
    for (Layout in : ins) {
      copy.push_back(copy_case(t, in, Layout::dense, {3, 37, 200}));
      gemm.push_back(gemm_case(t, in, Layout::dense, 2, 130, 136, 72));
      if (t == DType::f32) { // a thread an output: a partial warp, K not a multiple of the
        // unroll, split over K; a thread a column: a partial block of columns, K below the
        // register count
        gemm.push_back(gemm_case(t, in, Layout::dense, 3, 17, 15, 1027));
        for (const auto& [m, n] : {std::pair<int64_t, int64_t>{17, 300}, {300, 17}}) {
          gemm.push_back(gemm_case(t, in, Layout::dense, 3, m, n, 13));
          gemm.back().name += "_m" + std::to_string(m) + "n" + std::to_string(n);
        }
      }
      if (t != DType::f32) // the tensor-core plans: 16, 32, 64 and 128-row tiles, split-K,
        // and streamed tiles (more than two waves: 1128 tiles of 64 rows, partial in M, N and K),
        // 32 columns without split-K (short K at batch 16)
        for (const auto& [b, m, n, kk] :
             {std::array<int64_t, 4>{1, 232, 49, 232}, std::array<int64_t, 4>{1, 24, 300, 200},
              std::array<int64_t, 4>{3, 10, 100, 40}, std::array<int64_t, 4>{1, 256, 16896, 40},
              std::array<int64_t, 4>{8, 130, 3000, 72},
              std::array<int64_t, 4>{16, 116, 196, 116}}) {
          gemm.push_back(gemm_case(t, in, Layout::dense, b, m, n, kk));
          gemm.back().name += "_m" + std::to_string(m) + "n" + std::to_string(n);
        }
      if (t != DType::f32) { // streamed with A kept (tc_keeps_a), as pointwise convolutions
        // run: two tiles of rows, the second partial, K = 72 short of its third k tile
        gemm.push_back(gemm_case(t, in, Layout::dense, 1, 96, 38400, 72, true));
        gemm.back().name += "_kept_a";
        // pointwise_tc: whole tiles of 16 channels and one k step; then a partial channel
        // tile, K short of its second k step and a partial last tile of pixels (odd rows:
        // stores one at a time).
        gemm.push_back(pointwise_case(t, in, 64, 67584, 16));
        gemm.push_back(pointwise_case(t, in, 40, 68001, 24));
      }

      for (int64_t m : {1, 4, 16})
        gemv.push_back(gemv_case(t, in, Layout::dense, 1, m, 1000, 1536));
      if (t != DType::f32) // tensor cores: both operands 16-bit; K not a multiple of 8
        for (int64_t m : {1, 8, 16})
          gemv.push_back(gemv_tc_case(t, in, Layout::dense, 2, m, 1000, 1539));
      if (in != Layout::concat_last) {
        attention.push_back(attention_case(t, in, 2, 8, 700, 128, 4, 650, 0.0f));
        // Streamed through shared memory: a partial last tile, fewer valid keys than the
        // cache, a head size that leaves lanes idle (96), and one chunk.
        attention.push_back(attention_tiled_case(t, in, 2, 8, 700, 128, 4, 650, 0.0f));
        attention.push_back(attention_tiled_case(t, in, 1, 4, 300, 96, 2, -1, 0.0f));
        attention.back().name += "_d96";
        attention.push_back(attention_tiled_case(t, in, 1, 2, 100, 256, 2, -1, 30.0f));
        attention.back().name += "_d256";
        // Warps streaming their own keys: the same shapes, a group of 8 at D = 64, and one
        // chunk with fewer keys than a warp's run.
        attention.push_back(attention_stream_case(t, in, 2, 8, 700, 128, 4, 650, 0.0f));
        attention.push_back(attention_stream_case(t, in, 1, 4, 300, 96, 2, -1, 0.0f));
        attention.back().name += "_d96";
        attention.push_back(attention_stream_case(t, in, 1, 2, 100, 256, 2, -1, 30.0f));
        attention.back().name += "_d256";
        attention.push_back(attention_stream_case(t, in, 3, 16, 2000, 64, 8, 1999, 0.0f));
        attention.back().name += "_d64";
        if (t != DType::f32 && (in == Layout::dense || in == Layout::computed)) {
          // Tensor cores, the same shapes: K and V by cp.async, and through load().
          attention.push_back(attention_mma_case(t, in, 2, 8, 700, 128, 4, 650, 0.0f));
          attention.push_back(attention_mma_case(t, in, 1, 4, 300, 96, 2, -1, 0.0f));
          attention.back().name += "_d96";
          attention.push_back(attention_mma_case(t, in, 1, 2, 100, 256, 2, -1, 30.0f));
          attention.back().name += "_d256";
          attention.push_back(attention_mma_case(t, in, 3, 16, 2000, 64, 8, 1999, 0.0f));
          attention.back().name += "_d64";
        }
        if (t != DType::f32) {
          // Streaming warps on tensor cores: D = 128, 256 (softcap), 64 with 8 heads a group,
          // 192 with 3; runs ending inside a 16-key tile.
          attention.push_back(attention_stream_tc_case(t, in, 2, 8, 700, 128, 4, 650, 0.0f));
          attention.push_back(attention_stream_tc_case(t, in, 1, 2, 100, 256, 2, -1, 30.0f));
          attention.back().name += "_d256";
          attention.push_back(attention_stream_tc_case(t, in, 3, 16, 2000, 64, 8, 1999, 0.0f));
          attention.back().name += "_d64";
          attention.push_back(attention_stream_tc_case(t, in, 2, 6, 333, 192, 3, -1, 0.0f));
          attention.back().name += "_d192";
        }
        attention.push_back(prefill_attention_case(t, in, 2, 4, 37, 100, 64, 2, 0.0f, true));
      }
      rows.push_back(softmax_case(t, in, Layout::dense, 5, 1000, false));
      rows.push_back(softmax_case(t, in, Layout::dense, 5, 1000, true));
      rows.push_back(layer_norm_case(t, in, Layout::dense, 5, 1000, false));
      rows.push_back(layer_norm_case(t, in, Layout::dense, 5, 1000, true));
      for (const char* kind : {"Sum", "Mean", "Max", "Min", "SumSquare"})
        if (in == Layout::dense || std::string(kind) == "Sum" || std::string(kind) == "Max")
          rows.push_back(reduce_case(t, in, 7, 1000, kind));
      // Short rows, a warp each: a partial last block of rows, a row under one slice a lane.
      for (const char* kind : {"Mean", "Max"}) {
        rows.push_back(reduce_case(t, in, 1001, 49, kind));
        rows.back().name += "_warp_rows";
      }
      window.push_back(pool_case(t, in, true, 2, 8, 33, 35, 3, 2, 1));
      window.push_back(pool_case(t, in, false, 2, 8, 33, 35, 3, 2, 1));
      window.push_back(depthwise_case(t, in, 2, 8, 33, 35, 3, 1, 1));
      // Stride 2 over an odd width, 5 x 5 with padding 2, planes 16 wide (whole vectors).
      window.push_back(depthwise_case(t, in, 2, 8, 33, 35, 3, 2, 1));
      window.back().name += "_s2";
      window.push_back(depthwise_case(t, in, 1, 4, 21, 19, 5, 1, 2));
      window.back().name += "_5x5";
      window.push_back(depthwise_case(t, in, 2, 4, 16, 16, 3, 1, 1));
      window.back().name += "_w16";
      window.push_back(depthwise_case(t, in, 2, 4, 32, 32, 3, 2, 1));
      window.back().name += "_w16_s2";
      window.push_back(upsample_case(t, in, Layout::dense, 2, 3, 17, 19, 2));
      conv.push_back(conv_case(t, in, 2, 16, 19, 21, 24, 3, 1, 1));
      // Windows of few taps: a stem (3 x 3 x 3, stride 2), 5 x 5 of one channel with padding,
      // 32 taps into 64 channels.
      conv.push_back(conv_case(t, in, 2, 3, 33, 35, 16, 3, 2, 1, true));
      conv.back().name += "_stem";
      conv.push_back(conv_case(t, in, 1, 1, 20, 19, 5, 5, 1, 2, true));
      conv.back().name += "_k5";
      conv.push_back(conv_case(t, in, 1, 2, 9, 10, 64, 4, 1, 0, true));
      conv.back().name += "_k4co64";
      if (t != DType::f32) { // 16- and 64-row tiles, stride 2, 1 x 1 and 5 x 5 windows
        conv.push_back(conv_case(t, in, 1, 3, 40, 38, 8, 3, 2, 1));
        conv.back().name += "_co8s2";
        conv.push_back(conv_case(t, in, 2, 40, 9, 11, 100, 1, 1, 0));
        conv.back().name += "_co100k1";
        conv.push_back(conv_case(t, in, 1, 12, 14, 14, 70, 5, 1, 2));
        conv.back().name += "_co70k5";
        conv.push_back(conv_case(t, in, 8, 16, 130, 130, 24, 3, 1, 1)); // streamed: 2120 tiles
        conv.back().name += "_streamed";
        // Streamed with the weights kept (tc_keeps_a): two tiles of rows, the second partial,
        // K = 72 short of its third k tile.
        conv.push_back(conv_case(t, in, 16, 72, 48, 48, 96, 1, 1, 0));
        conv.back().name += "_kept_a";
      }
    }
    // Stores through mappings.
    // A transposed input copied through tiles: partial tiles in both dimensions, and whole
    // ones over a larger plane (the timed case).
    for (Layout out : {Layout::dense, Layout::concat, Layout::concat_last}) {
      copy.push_back(copy_transposed_case(t, out, {3, 37, 200}));
      copy.push_back(copy_transposed_case(t, out, {16, 256, 1024}));
      copy.back().name += "_large";
    }
    // An attention block's rows of 48 (EfficientViT's q, k, v of 16 each): the last dimension
    // fills three quarters of a tile.
    copy.push_back(copy_transposed_case(t, Layout::dense, {256, 1024, 48}));
    copy.back().name += "_rows48";
    copy.push_back(copy_case(t, Layout::transposed, Layout::dense, {16, 256, 1024}));
    copy.back().name += "_large"; // the generic copy of the same input, to compare
    for (Layout out : {Layout::transposed, Layout::concat, Layout::concat_last}) {
      copy.push_back(copy_case(t, Layout::dense, out, {3, 37, 200}));
      gemm.push_back(gemm_case(t, Layout::dense, out, 2, 130, 136, 72));
      gemv.push_back(gemv_case(t, Layout::dense, out, 1, 4, 1000, 1536));
      if (t != DType::f32) gemv.push_back(gemv_tc_case(t, Layout::dense, out, 1, 8, 1000, 1536));
      rows.push_back(softmax_case(t, Layout::dense, out, 5, 1000, false));
      window.push_back(upsample_case(t, Layout::dense, out, 2, 3, 17, 19, 2));
    }
    // A library's raw product stored through every kind of output: rows of 37 (a partial
    // group of 8 per row, unaligned rows) and of 64.
    for (Layout out : {Layout::dense, Layout::transposed, Layout::concat, Layout::concat_last}) {
      window.push_back(library_epilogue_case(t, out, 2, 3, 5, 37, false));
      window.push_back(library_epilogue_case(t, out, 1, 4, 3, 64, false));
      window.back().name += "_w64";
      // Channels-last raw products: 3 channels (no whole vector), 72 (a partial second tile of
      // channels) over rows of 64, and rows of 12 (groups of 8 pixels across rows).
      window.push_back(library_epilogue_case(t, out, 2, 3, 5, 37, true));
      window.push_back(library_epilogue_case(t, out, 1, 72, 3, 64, true));
      window.back().name += "_c72";
      window.push_back(library_epilogue_case(t, out, 2, 16, 7, 12, true));
      window.back().name += "_w12";
      // Tiles fitted to narrow products: 8 channels by 512 pixels (the second tile partial,
      // groups of 8 pixels across rows of 300), 32 by 128 (rows of 40).
      window.push_back(library_epilogue_case(t, out, 1, 8, 2, 300, true));
      window.back().name += "_c8";
      window.push_back(library_epilogue_case(t, out, 1, 32, 5, 40, true));
      window.back().name += "_c32";
      // In the raw product's order: 3 channels (no whole vector), 20 (a partial vector).
      for (int64_t ch : {3, 20, 64}) {
        window.push_back(library_epilogue_case(t, out, 2, ch, 5, 7, true, true));
        window.back().name += "_c" + std::to_string(ch);
      }
    }
    // Into an output held channels-last, as the program holds one: whole vectors of 8
    // channels stored as one, the rest element by element.
    for (int64_t ch : {3, 20, 64}) {
      window.push_back(library_epilogue_case(t, Layout::channels_last, 2, ch, 5, 7, true, true));
      window.back().name += "_c" + std::to_string(ch);
    }
    if (t != DType::f32) {
      // Inputs staged NHWC through every kind of accessor: 16 channels over 37 pixels (a
      // partial tile of pixels), 72 over 64 (a partial second tile of channels), 20 (a partial
      // vector of 8).
      for (Layout in : {Layout::dense, Layout::transposed, Layout::concat, Layout::concat_last,
                        Layout::channels_last, Layout::computed}) {
        window.push_back(library_prologue_case(t, in, 2, 16, 1, 37));
        window.back().name += "_c16";
        window.push_back(library_prologue_case(t, in, 1, 72, 8, 8));
        window.back().name += "_c72";
        window.push_back(library_prologue_case(t, in, 2, 20, 3, 5));
        window.back().name += "_c20";
        // 8 channels: tiles of 512 pixels, the second partial; rows of 300 (a group of 8
        // pixels crossing a row is loaded one by one).
        window.push_back(library_prologue_case(t, in, 1, 8, 2, 300));
        window.back().name += "_c8";
      }
      // A stem stored channels-last (8 channels of a pixel as one vector; 20 channels: a
      // partial group stored one by one), into a Concat's pieces, and dense.
      for (Layout out : {Layout::channels_last, Layout::concat, Layout::dense})
        for (int64_t c_out : {16, 20}) {
          conv.push_back(conv_case(t, Layout::dense, 2, 3, 17, 19, c_out, 3, 2, 1, true, out));
          conv.back().name += "_o" + std::to_string(c_out);
        }
    }
    attention.push_back(attention_case(t, Layout::dense, 1, 8, 4096, 64, 8, 4096, 30.0f));
    attention.push_back(
        prefill_attention_case(t, Layout::dense, 1, 2, 20, 45, 40, 1, 30.0f, false));
  }
  return {{"copy", copy}, {"gemm", gemm},     {"gemv", gemv}, {"attention", attention},
          {"rows", rows}, {"window", window}, {"conv", conv}};
}

// Large dense cases, timed: the paper's workloads' shapes where they have them.
std::vector<Case> timed_cases() {
  const DType bf = DType::bf16, h = DType::f16, f = DType::f32;
  const Layout d = Layout::dense;
  std::vector<Case> v = {
      copy_case(h, d, d, {64, 1024, 1024}),
      copy_case(f, d, d, {64, 1024, 1024}),
      gemm_case(bf, d, d, 1, 4096, 4096, 4096),
      gemm_case(h, d, d, 1, 4096, 4096, 4096),
      gemm_case(f, d, d, 1, 4096, 4096, 4096),
      gemm_case(bf, d, d, 1, 512, 14336, 4096),
      gemv_case(bf, d, d, 1, 1, 14336, 4096),
      gemv_case(bf, d, d, 1, 1, 4096, 14336),
      gemv_case(bf, d, d, 1, 16, 14336, 4096),
      gemv_case(f, d, d, 1, 1, 4096, 4096),
      attention_case(bf, d, 1, 32, 4096, 128, 4, -1, 0.0f),
      attention_case(bf, d, 16, 32, 4096, 128, 4, -1, 0.0f),
      softmax_case(f, d, d, 4096, 32000, false),
      layer_norm_case(h, d, d, 8192, 4096, false),
      layer_norm_case(bf, d, d, 8192, 4096, true),
      reduce_case(f, d, 8192, 8192, "Sum"),
      pool_case(h, d, true, 16, 128, 160, 160, 3, 2, 1),
      depthwise_case(h, d, 16, 256, 80, 80, 3, 1, 1),
      conv_case(h, d, 16, 128, 160, 160, 128, 3, 1, 1),
      conv_case(f, d, 1, 128, 160, 160, 128, 3, 1, 1),
      upsample_case(h, d, d, 16, 128, 80, 80, 2),
      prefill_attention_case(bf, d, 1, 32, 512, 512, 128, 4, 0.0f, false),
      gemv_tc_case(bf, d, d, 1, 16, 14336, 4096),
      gemv_tc_case(bf, d, d, 1, 16, 4096, 14336),
      gemv_tc_case(bf, d, d, 1, 1, 14336, 4096),
      // Pointwise convolutions of ShuffleNet V2's stage 4 and last layer as gemm_tc: grids of 2
      // and 8 blocks, rows of 49 (not 16-byte aligned).
      gemm_case(h, d, d, 1, 232, 49, 232),
      gemm_case(h, d, d, 1, 1024, 49, 464),
      // YOLO11n's 3 x 3 convolutions: the neck's 64 -> 64 at 20 x 20 (batch 1), a C3k2 block's
      // 32 -> 64 at 160 x 160 (batch 16); ShuffleNet's stage-3 depthwise at batch 1.
      conv_case(h, d, 1, 64, 20, 20, 64, 3, 1, 1),
      conv_case(h, d, 16, 32, 160, 160, 64, 3, 1, 1),
      depthwise_case(h, d, 1, 116, 14, 14, 3, 1, 1),
      // timed10 and timed11 with K and V streamed through shared memory.
      attention_tiled_case(bf, d, 1, 32, 4096, 128, 4, -1, 0.0f),
      attention_tiled_case(bf, d, 16, 32, 4096, 128, 4, -1, 0.0f),
      // Gemma-2-9B at batch 16: 16 heads of 256 over 8 cache heads, 4096 keys.
      attention_tiled_case(bf, d, 16, 16, 4096, 256, 2, -1, 50.0f),
      // timed30-32 on tensor cores.
      attention_mma_case(bf, d, 1, 32, 4096, 128, 4, -1, 0.0f),
      attention_mma_case(bf, d, 16, 32, 4096, 128, 4, -1, 0.0f),
      attention_mma_case(bf, d, 16, 16, 4096, 256, 2, -1, 50.0f),
      // timed36: EfficientViT's linear attention at batch 16 (v . k^T per head), a thread an
      // output.
      gemm_case(f, d, d, 256, 17, 16, 1024),
      // timed37-38: the stems of YOLO11n (640 x 640) and EfficientViT (512 x 512) at batch 16,
      // 3 -> 16 channels, 3 x 3, stride 2, on conv2d_direct.
      conv_case(h, d, 16, 3, 640, 640, 16, 3, 2, 1, true),
      conv_case(h, d, 16, 3, 512, 512, 16, 3, 2, 1, true),
      // timed39-42: every warp streaming its own keys, the Llama-3 shape at batch 1 and 16, the
      // Gemma-2 shape (8192 keys) at batch 1 and 16.
      attention_stream_case(bf, d, 1, 32, 4096, 128, 4, -1, 0.0f),
      attention_stream_case(bf, d, 16, 32, 4096, 128, 4, -1, 0.0f),
      attention_stream_case(bf, d, 1, 16, 8192, 256, 2, -1, 50.0f),
      attention_stream_case(bf, d, 16, 16, 8192, 256, 2, -1, 50.0f),
      // timed43-44: the tiled kernel on the Gemma-2 shape, for comparison.
      attention_tiled_case(bf, d, 1, 16, 8192, 256, 2, -1, 50.0f),
      attention_tiled_case(bf, d, 16, 16, 8192, 256, 2, -1, 50.0f),
      // timed45-48: timed39-42 on tensor cores.
      attention_stream_tc_case(bf, d, 1, 32, 4096, 128, 4, -1, 0.0f),
      attention_stream_tc_case(bf, d, 16, 32, 4096, 128, 4, -1, 0.0f),
      attention_stream_tc_case(bf, d, 1, 16, 8192, 256, 2, -1, 50.0f),
      attention_stream_tc_case(bf, d, 16, 16, 8192, 256, 2, -1, 50.0f),
      // timed49: EfficientViT's other linear-attention product at batch 16, q . (k^T . v) per
      // head, a thread a row; timed50: timed36 at batch 1 (16 heads), split over K; timed51:
      // a thread a column.
      gemm_case(f, d, d, 256, 1024, 17, 16),
      gemm_case(f, d, d, 16, 16, 17, 1024),
      gemm_case(f, d, d, 256, 17, 1024, 16),
      // timed52-54: Gemma-2's K (and V) projection at batch 1 and 16, and its Q at 16: few
      // panels, many split-K chunks (28 and 16) for each panel's last block to add.
      gemv_tc_case(bf, d, d, 1, 1, 2048, 3584),
      gemv_tc_case(bf, d, d, 1, 16, 2048, 3584),
      gemv_tc_case(bf, d, d, 1, 16, 4096, 3584),
      // timed55-62: the same products at other split-K chunks, and Llama-3's 16-row QKV at a
      // longer chunk and at its own (kernels/cuda/NOTES.md, "Chunkings timed next").
      gemv_tc_case(bf, d, d, 1, 16, 2048, 3584, 256),
      gemv_tc_case(bf, d, d, 1, 16, 2048, 3584, 448),
      gemv_tc_case(bf, d, d, 1, 16, 2048, 3584, 896),
      gemv_tc_case(bf, d, d, 1, 16, 4096, 3584, 448),
      gemv_tc_case(bf, d, d, 1, 16, 4096, 3584, 896),
      gemv_tc_case(bf, d, d, 1, 1, 2048, 3584, 256),
      gemv_tc_case(bf, d, d, 1, 16, 6144, 4096, 512),
      gemv_tc_case(bf, d, d, 1, 16, 6144, 4096),
      // timed63-71: the one-row products of Llama-3 (QKV, O) and Gemma-2 (K, gate, down) on
      // gemv, then the same on gemv_tc (Llama-3's gate is timed22 and timed24).
      gemv_case(bf, d, d, 1, 1, 6144, 4096),
      gemv_case(bf, d, d, 1, 1, 4096, 4096),
      gemv_case(bf, d, d, 1, 1, 2048, 3584),
      gemv_case(bf, d, d, 1, 1, 14336, 3584),
      gemv_case(bf, d, d, 1, 1, 3584, 14336),
      gemv_tc_case(bf, d, d, 1, 1, 6144, 4096),
      gemv_tc_case(bf, d, d, 1, 1, 4096, 4096),
      gemv_tc_case(bf, d, d, 1, 1, 14336, 3584),
      gemv_tc_case(bf, d, d, 1, 1, 3584, 14336),
      // timed72-73: YOLO11n's staged cuDNN inputs at batch 16: the 64 channels at 160 x 160 of
      // l3's input (one tile of 64 channels), the 16 of a C3k2 block's Split piece (tiles of 16
      // channels by 256 pixels, read through two pieces); timed74: the NHWC epilogue of l3's
      // output, 64 channels at 80 x 80; timed75: a narrow one, backbone.1's 32 channels at
      // 160 x 160 (tiles of 32 channels by 128 pixels).
      library_prologue_case(h, d, 16, 64, 160, 160),
      library_prologue_case(h, Layout::concat, 16, 16, 160, 160),
      library_epilogue_case(h, d, 16, 64, 80, 80, true, false),
      library_epilogue_case(h, d, 16, 32, 160, 160, true, false),
      // timed76-77: ShuffleNet V2's pointwise convolutions of stages 3 and 4 at batch 16 (tiles
      // of 32 columns, K not split).
      gemm_case(h, d, d, 16, 116, 196, 116),
      gemm_case(h, d, d, 16, 232, 49, 232),
  };
  for (size_t i = 0; i < v.size(); ++i) {
    v[i].name = "timed" + std::to_string(i) + "_" + v[i].name;
    v[i].group = "timed" + std::to_string(i) + "_" + v[i].group;
  }
  return v;
}

} // namespace vtc::cuda_test
