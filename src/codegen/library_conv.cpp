// Which convolution kernels cuDNN can compute (see library_conv.h).
#include "codegen/library_conv.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "codegen/kernel_calls.h"

namespace vtc {

namespace {

// The output extent cuDNN gives for `in` padded by `pad` on both sides.
int64_t symmetric_extent(int64_t in, int64_t pad, int64_t k, int64_t stride, int64_t dil) {
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

bool read_from_memory(const Kernel& k, const Value* v) {
  return std::find(k.inputs.begin(), k.inputs.end(), v) != k.inputs.end();
}

} // namespace

std::optional<LibraryConvShape> library_conv_form(const Kernel& k) {
  if (k.kind != KernelKind::conv || !k.anchor || k.anchor->op != "Conv") return std::nullopt;
  const Node& n = *k.anchor;
  if (n.inputs.size() < 2 || !n.inputs[0] || !n.inputs[1] || !n.outputs[0]) return std::nullopt;
  const DType t = n.inputs[0]->type.dtype;
  if ((t != DType::f16 && t != DType::bf16) || n.inputs[1]->type.dtype != t ||
      n.outputs[0]->type.dtype != t)
    return std::nullopt;
  if (!read_from_memory(k, n.inputs[0]) || !read_from_memory(k, n.inputs[1])) return std::nullopt;
  std::optional<kernels::Conv2dShape> cs = conv2d_shape(n);
  if (!cs || cs->groups != 1) return std::nullopt;
  if (cs->pad_top < 0 || cs->pad_left < 0 ||
      cs->h_out != symmetric_extent(cs->h, cs->pad_top, cs->kh, cs->stride_h, cs->dil_h) ||
      cs->w_out != symmetric_extent(cs->w, cs->pad_left, cs->kw, cs->stride_w, cs->dil_w))
    return std::nullopt;
  return LibraryConvShape{*cs, t};
}

bool cudnn_channels_last(const kernels::Conv2dShape& s) {
  const char* v = std::getenv("VTC_CUDNN_CHANNELS_LAST");
  const std::string mode = v ? v : "";
  if (mode == "0" || mode == "1") return mode == "1";
  const bool vectors = s.c_in % 8 == 0 && s.c_out % 8 == 0;
  const bool large = s.w_out % 8 == 0 && s.n * s.h_out * s.w_out >= kChannelsLastPixels;
  if (mode == "pixels") return vectors && large;
  return vectors && (large || s.kh * s.kw > 1);
}

} // namespace vtc
