// Kernel calls of attention kernels (attention_pattern.h): decode (one query token) and
// prefill attention of kernels/cpu/attention.h and kernels/cuda (attention.h,
// decode_attention_stream.h, decode_attention_stream_tc.h, decode_attention_tiled.h,
// prefill_attention.h) over accessors.
// Q is read as the kernel computes it (a RoPE prologue) or as stored; K through the mapping
// of K^T with its last two dimensions swapped (swap_last_two), so a K cache reached by
// Transpose, Reshape and the grouped-query Expand is read in place, a row at a time; V and the
// mask through their own accessors, the mask at its broadcast index. The output is the last
// MatMul's, through its epilogue.
#include <algorithm>

#include "codegen/kernel_calls.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/decode_attention_stream_tc.h"
#include "kernels/cuda/decode_attention_tiled.h"
#include "kernels/cuda/prefill_attention.h"
#include "mapping/transposed_operand.h"
#include "passes/attention_pattern.h"
#include "vtc/error.h"

namespace vtc {

namespace {

bool on_cuda(const AccessorEmitter& g) {
  return g.dialect().library() == KernelLibrary::cuda;
}

bool cuda_float(const Value* v) {
  return !v || v->type.dtype == DType::f32 || v->type.dtype == DType::f16 ||
         v->type.dtype == DType::bf16;
}

// The group the cuda decode kernel is instantiated for: the largest divisor of the pattern's
// group it takes (1 .. 16).
int64_t cuda_group(const AttentionPattern& p) {
  for (int64_t g = std::min<int64_t>(p.group, 16); g > 1; --g)
    if (p.group % g == 0) return g;
  return 1;
}

kernels::DecodeAttentionShape cuda_decode_shape(const AttentionPattern& p) {
  return kernels::make_decode_attention_shape(p.batch, p.heads, p.kv_len, p.d, p.dv, cuda_group(p));
}

kernels::PrefillAttentionShape cuda_prefill_shape(const AttentionPattern& p) {
  return kernels::PrefillAttentionShape{p.batch, p.heads, p.q_len, p.kv_len, p.d, p.dv};
}

std::string list(std::initializer_list<int64_t> xs) {
  std::string s;
  for (int64_t x : xs)
    s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

// Index terms of a rank-4 value read at the [B,H,T,S] index (i0, i1, i2, i3) with numpy
// broadcasting; for decode (T = 1) over the rank-3 index (i0, i1, i2 = key).
IndexTerms mask_index(const Shape& m, bool decode) {
  IndexTerms full = broadcast_index(m, 4);
  if (!decode) return full;
  IndexTerms xs;
  for (const IndexTerm& t : full) {
    if (t.uses(2))
      xs.push_back(IndexTerm::zero()); // T = 1: extent 1 along the queries
    else if (t.uses(3))
      xs.push_back(IndexTerm::dim(2));
    else
      xs.push_back(t);
  }
  return xs;
}

// The rank-3 view (i0, i1, 0, i2) of a [B,H,1,X] accessor.
Acc decode_view(AccessorEmitter& g, const Acc& a) {
  return g.view(a, 3, {IndexTerm::dim(0), IndexTerm::dim(1), IndexTerm::zero(), IndexTerm::dim(2)},
                true);
}

// The cuda decode kernel of a pattern, its shape and launch.
struct CudaDecodeKernel {
  std::string function;
  std::vector<std::string> template_args;
  kernels::DecodeAttentionShape shape;
  kernels::Launch launch;
};

// Every warp streaming its own keys, on tensor cores where Q, K and V are of one 16-bit type
// (decode_attention_stream_tc.h), else on the CUDA cores (decode_attention_stream.h); shapes
// neither takes (Dv != D, D past 256, groups past 8) as before: K and V streamed through shared
// memory where that was measured faster (decode_attention_tiled.h), else a few rows a thread
// in flight (attention.h). The shape and types alone decide, so every strategy runs the same
// kernel. decode_attention_mma.h was measured slower than these on every shape of the
// workloads (kernels/cuda/NOTES.md).
CudaDecodeKernel choose_cuda_decode_kernel(const AttentionPattern& p) {
  namespace k = kernels;
  const int64_t group = cuda_group(p);
  const DType kv = p.v->type.dtype;
  const std::string g = std::to_string(group);
  if (kv != DType::f32 && p.kt->type.dtype == kv && p.q->type.dtype == kv &&
      k::decode_attention_stream_tc_supported(p.d, p.dv, group)) {
    const auto s =
        k::make_decode_attention_stream_tc_shape(p.batch, p.heads, p.kv_len, p.d, p.dv, group);
    return {"decode_attention_stream_tc",
            {g, std::to_string(p.d)},
            s,
            k::decode_attention_stream_tc_launch(s)};
  }
  if (k::decode_attention_stream_supported(p.d, p.dv, group)) {
    const auto s =
        k::make_decode_attention_stream_shape(p.batch, p.heads, p.kv_len, p.d, p.dv, group);
    return {"decode_attention_stream", {g}, s, k::decode_attention_stream_launch(s)};
  }
  if (p.kt->type.dtype == kv && k::decode_attention_tiled_preferred(p.d, p.dv, group)) {
    const auto s =
        k::make_decode_attention_tiled_shape(p.batch, p.heads, p.kv_len, p.d, p.dv, group);
    return {"decode_attention_tiled",
            {g},
            s,
            k::decode_attention_tiled_launch(s, int64_t(dtype_size(kv)))};
  }
  const auto s = cuda_decode_shape(p);
  return {"decode_attention", {g}, s, k::decode_attention_launch(s)};
}

} // namespace

bool attention_supported(const Kernel& k) {
  if (!k.anchor) return false;
  std::optional<AttentionPattern> p = match_attention(*k.anchor);
  if (!p) return false;
  for (const Node* n : p->chain)
    if (std::find(k.nodes.begin(), k.nodes.end(), n) == k.nodes.end()) return false;
  return true;
}

bool cpu_takes_attention(const AttentionPattern&) {
  return true; // kernels/cpu/attention.h computes in float (double for f64), any shape
}

bool cuda_takes_attention(const AttentionPattern& p) {
  for (const Value* v : {p.q, p.kt, p.v, p.mask, p.output->outputs[0]})
    if (!cuda_float(v)) return false;
  if (p.decode()) return true;
  return kernels::prefill_attention_supported(cuda_prefill_shape(p));
}

std::vector<KernelCall> attention_calls(KernelContext& c) {
  AccessorEmitter& g = c.g;
  std::optional<AttentionPattern> p = match_attention(*c.kernel.anchor);
  VTC_CHECK(p) << c.kernel.anchor->describe() << ": not an attention subgraph";
  const bool decode = p->decode();
  const IndexTerm i0 = IndexTerm::dim(0), i1 = IndexTerm::dim(1), i2 = IndexTerm::dim(2),
                  i3 = IndexTerm::dim(3);
  Acc K = g.inside.count(p->kt)
              ? g.view(g.value(p->kt), 4, {i0, i1, i3, i2}, false)
              : g.mapped(swap_last_two(g.storage_mapping(p->kt)), p->kt->type.dtype);
  Acc V = g.value(p->v);
  Acc Q = g.value(p->q);
  Acc O = c.output();
  if (decode) {
    Q = decode_view(g, Q);
    O = decode_view(g, O);
  }
  std::string mask = on_cuda(g) ? "NoOperand{}" : "NoAccessor{}";
  if (p->mask) {
    const Shape& m = p->mask->type.shape;
    const bool keeps_last = !m.empty() && m.back() == p->kv_len;
    mask = g.view(g.value(p->mask), decode ? 3 : 4, mask_index(m, decode), keeps_last).init;
  }
  if (on_cuda(g)) {
    const std::string params =
        "AttentionParams{float(" + literal(p->scale) + "), float(" + literal(p->softcap) + "), -1}";
    if (decode) {
      const CudaDecodeKernel kernel = choose_cuda_decode_kernel(*p);
      const kernels::DecodeAttentionShape& s = kernel.shape;
      const std::string shape = "DecodeAttentionShape{" +
                                list({s.batch, s.heads, s.kv_len, s.d, s.dv, s.group, s.chunk}) +
                                "}";
      KernelCall call{kernel.function,
                      kernel.template_args,
                      {O.init, Q.init, K.init, V.init, "attention_workspace(ws, " + shape + ")",
                       shape, params, mask}};
      call.launch = kernel.launch;
      call.workspace_bytes = kernels::attention_workspace_bytes(s);
      call.workspace_partial_bytes = kernels::attention_workspace_partial_bytes(s);
      return {call};
    }
    const kernels::PrefillAttentionShape s = cuda_prefill_shape(*p);
    const std::string shape =
        "PrefillAttentionShape{" + list({s.batch, s.heads, s.q_len, s.kv_len, s.d, s.dv}) + "}";
    KernelCall call{"prefill_attention", {}, {O.init, Q.init, K.init, V.init, shape, params, mask}};
    call.launch = kernels::prefill_attention_launch(s);
    return {call};
  }
  const std::string shape =
      "AttentionShape{" + list({p->batch, p->heads, p->q_len, p->kv_len, p->d, p->dv}) + "}";
  const std::string params =
      "AttentionParams{" + literal(p->scale) + ", " + literal(p->softcap) + ", -1, false, 0}";
  return {{decode ? "decode_attention" : "prefill_attention",
           {},
           {O.init, Q.init, K.init, V.init, shape, params, mask}}};
}

} // namespace vtc
