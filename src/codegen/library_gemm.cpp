// Shapes of MatMul and Gemm as OpenBLAS takes them, and the call that generated code makes.
#include "codegen/library_gemm.h"

#include <algorithm>
#include <limits>

namespace vtc {

namespace {

bool is_f32(const Value* v) {
  return v && v->type.dtype == DType::f32;
}

bool read_from_memory(const Kernel& k, const Value* v) {
  return std::find(k.inputs.begin(), k.inputs.end(), v) != k.inputs.end();
}

// Element offset of the matrix of batch `out_index` (an index of the output's batch dims) in
// an operand of shape `s` whose last two dims are the matrix (rank <= 1: a lone vector).
int64_t batch_offset(const Shape& s, const Shape& out_index) {
  int r = int(s.size()) - 2;
  if (r <= 0) return 0;
  int64_t stride = s[size_t(r)] * s[size_t(r + 1)], offset = 0;
  int nb = int(out_index.size());
  for (int d = r - 1; d >= 0; --d) {
    if (s[size_t(d)] != 1) offset += out_index[size_t(d + nb - r)] * stride;
    stride *= s[size_t(d)];
  }
  return offset;
}

Shape unflatten_index(int64_t flat, const Shape& dims) {
  Shape index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = flat % dims[d];
    flat /= dims[d];
  }
  return index;
}

// [..., M, K] . [..., K, N] with numpy batch broadcasting; a 1-D A is one row, a 1-D B is
// one column.
LibraryGemm matmul_form(const Node& n) {
  const Shape& sa = n.inputs[0]->type.shape;
  const Shape& sb = n.inputs[1]->type.shape;
  const Shape& so = n.outputs[0]->type.shape;
  int ra = int(sa.size()), rb = int(sb.size());
  LibraryGemm g;
  g.M = ra == 1 ? 1 : sa[size_t(ra - 2)];
  g.K = sa.back();
  g.N = rb == 1 ? 1 : sb.back();
  int nb = int(so.size()) - (ra > 1 ? 1 : 0) - (rb > 1 ? 1 : 0);
  Shape batch_dims(so.begin(), so.begin() + nb);
  int64_t batch = shape_numel(batch_dims);
  bool b_batched = rb > 2 && shape_numel(Shape(sb.begin(), sb.end() - 2)) > 1;
  if (!b_batched) {
    // One B for every batch: A's batches are consecutive rows of one product.
    g.M *= batch;
    g.folded = batch;
    return g;
  }
  g.batch = batch;
  for (int64_t i = 0; i < batch; ++i) {
    Shape index = unflatten_index(i, batch_dims);
    g.a_offsets.push_back(batch_offset(sa, index));
    g.b_offsets.push_back(batch_offset(sb, index));
  }
  return g;
}

LibraryGemm gemm_form(const Node& n) {
  const Shape& sa = n.inputs[0]->type.shape;
  const Shape& sb = n.inputs[1]->type.shape;
  LibraryGemm g;
  g.trans_a = n.attr_int("transA", 0) != 0;
  g.trans_b = n.attr_int("transB", 0) != 0;
  g.M = g.trans_a ? sa[1] : sa[0];
  g.K = g.trans_a ? sa[0] : sa[1];
  g.N = g.trans_b ? sb[0] : sb[1];
  return g;
}

std::string offsets_array(const std::string& name, const std::vector<int64_t>& offsets) {
  if (std::all_of(offsets.begin(), offsets.end(), [](int64_t o) { return o == 0; })) return "";
  std::string s = "static const int64_t " + name + "[] = {";
  for (size_t i = 0; i < offsets.size(); ++i)
    s += (i ? ", " : "") + std::to_string(offsets[i]);
  return s + "};";
}

} // namespace

std::optional<LibraryGemm> library_gemm_form(const Kernel& k) {
  const Node* n = k.anchor;
  // An attention kernel's anchor is a MatMul too, but its product is the whole subgraph's.
  if (!n || k.kind != KernelKind::gemm || (n->op != "MatMul" && n->op != "Gemm"))
    return std::nullopt;
  const Value* a = n->input(0);
  const Value* b = n->input(1);
  const Value* product = n->output(0);
  if (!is_f32(a) || !is_f32(b) || !is_f32(product) || n->outputs.size() != 1) return std::nullopt;
  if (a->type.rank() < 1 || b->type.rank() < 1) return std::nullopt;
  if (n->op == "Gemm" && (a->type.rank() != 2 || b->type.rank() != 2)) return std::nullopt;
  if (!read_from_memory(k, a) || !read_from_memory(k, b)) return std::nullopt;
  if (k.outputs.size() != 1 || !is_f32(k.outputs[0]) ||
      k.outputs[0]->type.shape != product->type.shape)
    return std::nullopt;
  LibraryGemm g = n->op == "MatMul" ? matmul_form(*n) : gemm_form(*n);
  g.a = a;
  g.b = b;
  g.out = k.outputs[0];
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  for (int64_t d : {g.M, g.N, g.K})
    if (d < 1 || d > kMaxInt) return std::nullopt;
  return g;
}

KernelCall library_gemm_call(const LibraryGemm& g, const std::string& a, const std::string& b,
                             const std::string& c) {
  KernelCall call;
  call.function = "blas_sgemm_batched";
  call.block = true;
  std::string a_offsets = offsets_array("a_offsets", g.a_offsets);
  std::string b_offsets = offsets_array("b_offsets", g.b_offsets);
  for (const std::string& local : {a_offsets, b_offsets})
    if (!local.empty()) call.locals.push_back(local);
  call.args = {g.trans_a ? "true" : "false",
               g.trans_b ? "true" : "false",
               std::to_string(g.batch),
               std::to_string(g.M),
               std::to_string(g.N),
               std::to_string(g.K),
               a,
               a_offsets.empty() ? "nullptr" : "a_offsets",
               b,
               b_offsets.empty() ? "nullptr" : "b_offsets",
               c};
  return call;
}

} // namespace vtc
