// Kernel calls of matrix products: MatMul (batched, with numpy broadcasting of the batch
// dimensions) and Gemm on the gemm templates over rank-3 views [batch, rows, cols], a B read
// through its transpose on gemm_bt, and f32 products on a library (OpenBLAS) followed by
// their epilogue in one pass over the output.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "codegen/kernel_calls.h"
#include "codegen/library_gemm.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemm_tc.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/gemv_tc.h"
#include "mapping/flat_plane.h"
#include "mapping/rules.h"
#include "mapping/transposed_operand.h"
#include "passes/fusion.h"
#include "vtc/error.h"

namespace vtc {

namespace {

bool on_cuda(const AccessorEmitter& g) {
  return g.dialect().library() == KernelLibrary::cuda;
}

// Rows from which a decode-sized product of two f16 or two bf16 operands runs on the tensor
// cores (gemv_tc). At one row the product is a read of the weights and nothing else: gemv on
// the CUDA cores, holding 8 raw rows of weights a warp in flight, reads them closer to the copy
// rate than gemv_tc's cp.async pipeline (kernels/cuda/NOTES.md, "A one-row gemv that keeps its
// loads in flight"). $VTC_CUDA_GEMV_ONE_ROW=tc: every row count on gemv_tc (to compare).
int64_t gemv_tc_min_rows() {
  const char* v = std::getenv("VTC_CUDA_GEMV_ONE_ROW");
  return v && std::string(v) == "tc" ? 1 : 2;
}

// Batches from which a decode-sized f32 product with a small output runs on gemm_f32_small
// rather than gemv (split over K). Measured on the H200, EfficientViT's 16 x 17 over K = 1024:
// a block a batch took 0.088 ms at 256 batches against gemv's 0.345, and 0.049 at 16 batches
// against gemv's 0.030 (too few blocks to hide the chain), hence 64 then. Split over K as well
// it takes 0.051 at 256 batches and 0.012 at 16, so products of fewer columns than a quarter of
// gemv's 256-column panel go to it at every batch; wider ones (a classifier's 1000 outputs,
// whose chunks of K would be a few rows) still from 64 ($VTC_CUDA_SMALL_F32=0: 64 for all).
int64_t gemm_f32_small_min_batch(int64_t n, bool before) {
  return !before && n < kernels::gemv_config::kCols / 4 ? 1 : 64;
}

// $VTC_CUDA_SMALL_F32=0: small f32 products as before gemm_f32_skinny and gemm_f32_small's
// split over K (to compare).
bool small_f32_products_as_before() {
  const char* v = std::getenv("VTC_CUDA_SMALL_F32");
  return v && std::string(v) == "0";
}

// C = A . B on cuda: gemv (split-K) for decode-sized M — on the tensor cores from
// gemv_tc_min_rows() of two 16-bit operands —, else the tensor-core GEMM (its tile and split-K
// planned from the shape) for two f16 or two bf16 operands and the f32 one otherwise (a thread an
// output, split over K, where the whole output is small: gemm_f32_small; a thread a long-side
// index where K and one side are small: gemm_f32_skinny). The choice is the shape's and dtypes',
// so every strategy gets the same kernel; `a_along_m` (A's runs along M) changes only the order
// gemm_f32_small loads A in.
KernelCall cuda_product(const Acc& C, const Acc& A, const Acc& B, DType ta, DType tb, int64_t batch,
                        int64_t M, int64_t N, int64_t K, bool a_along_m = false) {
  auto list = [](std::initializer_list<int64_t> xs) {
    std::string s;
    for (int64_t x : xs)
      s += (s.empty() ? "" : ", ") + std::to_string(x);
    return s;
  };
  const bool tc = ta == tb && (ta == DType::f16 || ta == DType::bf16);
  const kernels::GemmShape product{batch, M, N, K};
  const bool small = !tc && kernels::gemm_f32_small_fits(product);
  // A small output (EfficientViT's k^T . v per head, 16 x 17 over 1024 tokens, 256 of them at
  // batch 16) runs a thread an output, not on gemv, whose blocks are built for wide N.
  const bool before = small_f32_products_as_before();
  if (M <= 16 && !(small && batch >= gemm_f32_small_min_batch(N, before))) {
    const bool on_tc = tc && M >= gemv_tc_min_rows();
    const kernels::GemvShape gs = on_tc ? kernels::make_gemv_tc_shape(batch, M, N, K)
                                        : kernels::make_gemv_shape(batch, M, N, K);
    const std::string shape = "GemvShape{" + list({gs.batch, gs.m, gs.n, gs.k, gs.k_chunk}) + "}";
    KernelCall call{on_tc ? "gemv_tc" : "gemv",
                    {std::to_string(M)},
                    {C.init, A.init, B.init, "gemv_workspace(ws, " + shape + ")", shape}};
    call.launch = on_tc ? kernels::gemv_tc_launch(gs) : kernels::gemv_launch(gs);
    call.workspace_bytes = kernels::gemv_workspace_bytes(gs);
    call.workspace_partial_bytes = kernels::gemv_workspace_partial_bytes(gs);
    return call;
  }
  if (tc)
    return tc_call("gemm_tc", {C.init, A.init, B.init}, kernels::plan_gemm_tc(batch, M, N, K));
  const std::string shape = "GemmShape{" + list({batch, M, N, K}) + "}";
  if (small) {
    const int64_t k_split =
        before ? std::max<int64_t>(K, 1) : kernels::gemm_f32_small_k_split(product);
    KernelCall call{"gemm_f32_small",
                    a_along_m && !before ? std::vector<std::string>{"true"}
                                         : std::vector<std::string>{},
                    {C.init, A.init, B.init, "ws", shape, std::to_string(k_split)}};
    call.launch = kernels::gemm_f32_small_launch(product, k_split);
    call.workspace_bytes = kernels::gemm_f32_small_workspace_bytes(product, k_split);
    call.workspace_partial_bytes =
        kernels::gemm_f32_small_workspace_partial_bytes(product, k_split);
    return call;
  }
  const bool skinny = !before && kernels::gemm_f32_skinny_fits(product);
  KernelCall call{skinny ? "gemm_f32_skinny" : "gemm_f32", {}, {C.init, A.init, B.init, shape}};
  call.launch =
      skinny ? kernels::gemm_f32_skinny_launch(product) : kernels::gemm_f32_launch(product);
  return call;
}

// Whether A ([.., M, K], read through `g`) has its runs of memory along M rather than K: the
// value it is stored as (A itself, or the input of the one-input elementwise chain fused into
// the kernel that computes it) is read through the transpose of a layout with runs
// (transposed_operand.h). gemm_f32_small then stages A's chunks along m.
// $VTC_CUDA_GEMM_A_ALONG_M=0: always along k (to compare).
bool runs_along_rows(const AccessorEmitter& g, const Value* a) {
  if (const char* v = std::getenv("VTC_CUDA_GEMM_A_ALONG_M"); v && std::string(v) == "0")
    return false;
  while (a && g.inside.count(a))
    a = a->producer && a->producer->inputs.size() == 1 ? a->producer->inputs[0] : nullptr;
  if (!a || a->type.rank() < 2) return false;
  return transposed_operand(g.storage_mapping(a), value_base(a), int64_t(dtype_size(a->type.dtype)))
      .has_value();
}

std::vector<KernelCall> matmul(KernelContext& c, const Node& n) {
  AccessorEmitter& g = c.g;
  const Shape& sa = n.inputs[0]->type.shape;
  const Shape& sb = n.inputs[1]->type.shape;
  const Shape& so = n.outputs[0]->type.shape;
  int ra = int(sa.size()), rb = int(sb.size());
  int64_t M = ra == 1 ? 1 : sa[size_t(ra - 2)], K = sa.back(), N = rb == 1 ? 1 : sb.back();
  int nb = int(so.size()) - (ra > 1 ? 1 : 0) - (rb > 1 ? 1 : 0);
  Shape batch_dims(so.begin(), so.begin() + nb);
  int64_t batch = shape_numel(batch_dims);
  IndexTerms ob = unflatten(0, batch_dims);
  auto batch_index = [&](const Shape& s, int r) {
    IndexTerms xs;
    for (int d = 0; d < r - 2; ++d)
      xs.push_back(s[size_t(d)] == 1 ? IndexTerm::zero() : ob[size_t(d + nb - (r - 2))]);
    return xs;
  };
  const IndexTerm i1 = IndexTerm::dim(1), i2 = IndexTerm::dim(2);
  IndexTerms ia = ra == 1 ? IndexTerms{i2} : batch_index(sa, ra);
  if (ra > 1) ia.insert(ia.end(), {i1, i2});
  IndexTerms ib = rb == 1 ? IndexTerms{i1} : batch_index(sb, rb);
  if (rb > 1) ib.insert(ib.end(), {i1, i2});
  IndexTerms ic(ob.begin(), ob.end());
  if (ra > 1) ic.push_back(i1);
  if (rb > 1) ic.push_back(i2);
  if (ra > 2 && rb == 2) {
    // A matrix B shared by every batch (x [B, T, D] . W [D, N]): the batches are rows of one
    // product, [1, B*T, D] . [D, N], so W is read once — not once a batch — and decode's
    // B x 1 rows are one product of B rows.
    Shape rows(sa.begin(), sa.end() - 1);
    ia = unflatten(1, rows);
    ia.push_back(i2);
    ic = unflatten(1, rows);
    ic.push_back(i2);
    M *= batch;
    batch = 1;
  }
  Acc A = g.view(g.value(n.inputs[0]), 3, ia, true);
  // A B whose columns, not rows, are runs (q . K^T over a K cache, EfficientViT's v . k^T):
  // B is read through its transpose (transposed_operand.h).
  const Value* b = n.inputs[1];
  std::optional<Mapping> bt;
  if (rb > 1 && !g.inside.count(b) && !on_cuda(g))
    bt =
        transposed_operand(g.storage_mapping(b), value_base(b), int64_t(dtype_size(b->type.dtype)));
  Acc B =
      bt ? g.view(g.mapped(*bt, b->type.dtype), 3, ib, true) : g.view(g.value(b), 3, ib, rb > 1);
  Acc C = g.view(c.output(), 3, ic, rb > 1);
  if (on_cuda(g))
    return {cuda_product(C, A, B, n.inputs[0]->type.dtype, b->type.dtype, batch, M, N, K,
                         ra > 1 && runs_along_rows(g, n.inputs[0]))};
  return {{bt ? "gemm_bt" : "gemm",
           {},
           {C.init, A.init, B.init, std::to_string(batch), std::to_string(M), std::to_string(N),
            std::to_string(K)}}};
}

std::vector<KernelCall> gemm(KernelContext& c, const Node& n) {
  AccessorEmitter& g = c.g;
  bool ta = n.attr_int("transA", 0), tb = n.attr_int("transB", 0);
  const Shape& sa = n.inputs[0]->type.shape;
  const Shape& sb = n.inputs[1]->type.shape;
  int64_t M = ta ? sa[1] : sa[0], K = ta ? sa[0] : sa[1], N = tb ? sb[0] : sb[1];
  PostOp post = gemm_post(n, g);
  const IndexTerm i1 = IndexTerm::dim(1), i2 = IndexTerm::dim(2);
  Acc A = g.view(g.value(n.inputs[0]), 3, ta ? IndexTerms{i2, i1} : IndexTerms{i1, i2}, !ta);
  Acc B = g.view(g.value(n.inputs[1]), 3, tb ? IndexTerms{i2, i1} : IndexTerms{i1, i2}, !tb);
  Acc C = g.view(c.output(post), 3, {i1, i2}, true);
  if (on_cuda(g))
    return {cuda_product(C, A, B, n.inputs[0]->type.dtype, n.inputs[1]->type.dtype, 1, M, N, K)};
  return {{"gemm",
           {},
           {C.init, A.init, B.init, "1", std::to_string(M), std::to_string(N), std::to_string(K)}}};
}

// The product by the library straight into the kernel's output buffer, then Gemm's alpha and
// bias and the epilogue applied in place by one elementwise pass over it (each element is
// read, then overwritten, by the same thread).
std::vector<KernelCall> library_gemm(KernelContext& c, const Node& n) {
  AccessorEmitter& g = c.g;
  std::optional<LibraryGemm> form = library_gemm_form(c.kernel);
  VTC_CHECK(form) << n.describe() << ": no library form";
  std::vector<KernelCall> calls{library_gemm_call(
      *form, g.buffer_address(form->a), g.buffer_address(form->b), g.buffer_address(form->out))};
  PostOp post = n.op == "Gemm" ? gemm_post(n, g) : PostOp{};
  std::vector<const Node*> chain = epilogue_chain(c.kernel);
  if (chain.empty() && post.identity()) return calls;
  VTC_CHECK((chain.empty() ? n.outputs[0] : chain.back()->outputs[0]) == form->out)
      << n.describe() << ": the epilogue does not end in the kernel's output";
  Acc epilogue = g.storing(n.outputs[0], post, chain);
  calls.push_back(
      {"copy", {}, {epilogue.init, shape_array(form->out->type.shape), g.stored(form->out).init}});
  return calls;
}

} // namespace

// $VTC_CUDA_KEEP_A=0: streaming blocks fetch A's chunks every tile, as before tc_keeps_a (to
// compare).
bool keep_a_allowed() {
  const char* v = std::getenv("VTC_CUDA_KEEP_A");
  return !(v && std::string(v) == "0");
}

KernelCall tc_call(const std::string& function, std::vector<std::string> operands,
                   kernels::TcPlan p, const std::string& shape) {
  auto list = [](std::initializer_list<int64_t> xs) {
    std::string s;
    for (int64_t x : xs)
      s += (s.empty() ? "" : ", ") + std::to_string(x);
    return s;
  };
  p.a_shared = p.a_shared && keep_a_allowed();
  const std::string plan = "TcPlan{" +
                           list({p.batch, p.m, p.n, p.k, p.bm, p.bn, p.splits, p.k_tiles}) +
                           (p.a_shared ? ", true}" : "}");
  operands.push_back("tc_workspace(ws, " + plan + ")");
  if (!shape.empty()) operands.push_back(shape);
  operands.push_back(plan);
  KernelCall call{function, {std::to_string(p.bm), std::to_string(p.bn)}, std::move(operands)};
  call.launch = kernels::gemm_tc_launch(p);
  call.workspace_bytes = kernels::gemm_tc_workspace_bytes(p);
  call.workspace_partial_bytes = kernels::gemm_tc_workspace_partial_bytes(p);
  return call;
}

bool gemm_supported(const Kernel& k) {
  const Node& a = *k.anchor;
  if (a.op != "MatMul" && a.op != "Gemm") return false;
  switch (k.impl) {
  case KernelImpl::vtc_template:
    return true;
  case KernelImpl::openblas_sgemm:
    return library_gemm_form(k).has_value();
  case KernelImpl::cudnn_conv:
  case KernelImpl::cublaslt_conv:
    return false;
  }
  return false;
}

std::vector<KernelCall> gemm_calls(KernelContext& c) {
  const Node& a = *c.kernel.anchor;
  if (c.kernel.impl == KernelImpl::openblas_sgemm) return library_gemm(c, a);
  return a.op == "MatMul" ? matmul(c, a) : gemm(c, a);
}

} // namespace vtc
