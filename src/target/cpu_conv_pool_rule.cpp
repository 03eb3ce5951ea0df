// The pairs fused are the ones the fused kernel runs fast: its convolution rows come from
// conv_rows.h's row kernel, which exists for AVX-512 only. A pair the rule turns down runs as
// two kernels, the convolution's output written and read back.
#include "target/cpu_conv_pool_rule.h"

#include "kernels/cpu/conv_shape.h"

namespace vtc {
namespace {

bool host_has_avx512() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

bool all_f32(const Node& n) {
  for (const Value* v : n.inputs)
    if (v && v->type.dtype != DType::f32) return false;
  return n.outputs[0] && n.outputs[0]->type.dtype == DType::f32;
}

} // namespace

bool cpu_fuses_max_pool(const Node& conv, const Node& max_pool) {
  if (conv.inputs.size() < 2 || !conv.inputs[0] || !conv.inputs[1] || conv.outputs.empty())
    return false;
  if (!all_f32(conv) || !all_f32(max_pool)) return false;
  const Shape& sx = conv.inputs[0]->type.shape;
  const Shape& sw = conv.inputs[1]->type.shape;
  const Shape& so = conv.outputs[0]->type.shape;
  if (sx.size() != 4 || sw.size() != 4 || so.size() != 4) return false;
  const auto conv_strides = conv.attr_ints("strides", {1, 1});
  kernels::Conv2dShape cs;
  cs.c_in = sx[1];
  cs.groups = conv.attr_int("group", 1);
  cs.kh = sw[2];
  cs.kw = sw[3];
  cs.c_out = so[1];
  cs.w_out = so[3];
  cs.stride_w = conv_strides.size() == 2 ? conv_strides[1] : 0;
  if (!kernels::conv_rows_fit(cs)) return false;
  const auto k = max_pool.attr_ints("kernel_shape", {});
  const auto pool_strides = max_pool.attr_ints("strides", {1, 1});
  if (k.size() != 2 || pool_strides.size() != 2 || max_pool.attr_int("ceil_mode", 0) != 0)
    return false;
  if (k[1] > kernels::kMaxPoolTaps) return false;
  if (pool_strides[1] != 1 && pool_strides[1] != 2) return false;
  return host_has_avx512();
}

FuseOptions cpu_fuse_options() {
  FuseOptions options;
  options.max_pool_tail = cpu_fuses_max_pool;
  return options;
}

} // namespace vtc
