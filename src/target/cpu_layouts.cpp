// Tensors held channels-last on the cpu target (see cpu_layouts.h).
#include "target/cpu_layouts.h"

#include <cstdlib>
#include <string>

#include "codegen/kernel_calls.h"
#include "kernels/cpu/conv_shape.h"
#include "passes/fusion.h"
#include "target/channels_last_hold.h"

namespace vtc {

namespace {

// The most filter taps conv2d_nhwc takes, and the most bytes of one image it stages.
constexpr int64_t kNhwcMaxTaps = 64, kNhwcMaxStagedBytes = 8 << 20;

// The largest plane (h * w) a tensor held channels-last has.
constexpr int64_t kChannelsLastMaxPlane = 16;
// A larger plane, when every convolution touching it is wider than 1x1 and multiplies at
// least this many values a position (c_in * kh * kw).
constexpr int64_t kChannelsLastMinK = 64;

bool all_f32(const Kernel& k) {
  for (const Value* v : k.anchor->inputs)
    if (v && v->type.dtype != DType::f32) return false;
  for (const Value* v : k.outputs)
    if (v->type.dtype != DType::f32) return false;
  return true;
}

} // namespace

bool cpu_conv_takes_channels_last(const Kernel& k) {
  if (k.kind != KernelKind::conv || !k.anchor || k.anchor->op != "Conv" ||
      k.impl != KernelImpl::vtc_template || max_pool_tail(k) || k.outputs.size() != 1)
    return false;
  if (k.anchor->inputs[0]->type.rank() != 4 || !all_f32(k)) return false;
  const std::optional<kernels::Conv2dShape> s = conv2d_shape(*k.anchor);
  if (!s || cpu_conv_runs_winograd(*k.anchor, *s)) return false; // NCHW only, its own bits
  if (s->groups > 1) return s->c_in == s->groups && s->c_out == s->groups;
  const int64_t rows = (s->h_out - 1) * s->stride_h + (s->kh - 1) * s->dil_h + 1;
  const int64_t cols = (s->w_out - 1) * s->stride_w + (s->kw - 1) * s->dil_w + 1;
  return s->kh * s->kw <= kNhwcMaxTaps && rows * cols * s->c_in * 4 <= kNhwcMaxStagedBytes;
}

bool cpu_pool_takes_channels_last(const Kernel& k) {
  return k.kind == KernelKind::pool && k.anchor && k.anchor->op == "MaxPool" &&
         k.impl == KernelImpl::vtc_template && k.nodes.size() == 1 && k.outputs.size() == 1 &&
         k.anchor->outputs.size() == 1 && k.anchor->inputs[0]->type.rank() == 4 && all_f32(k);
}

void choose_cpu_channels_last(Program& p) {
  const char* env = std::getenv("VTC_CPU_HOLD_CHANNELS_LAST");
  if (env && std::string(env) == "0") return;
  const char* most = std::getenv("VTC_CPU_CHANNELS_LAST_PLANE");
  const int64_t max_plane = most && *most ? std::atoll(most) : kChannelsLastMaxPlane;
  const char* min_k = std::getenv("VTC_CPU_CHANNELS_LAST_MIN_K");
  const int64_t least_k = min_k && *min_k ? std::atoll(min_k) : kChannelsLastMinK;
  hold_channels_last(p, [&](const StepInfo& s, const Value* v, bool writes) {
    if (s.kind != StepKind::kernel || !s.kernel) return false;
    const Kernel& k = *s.kernel;
    // A max pooling: its output, or its input.
    if (cpu_pool_takes_channels_last(k))
      return writes ? k.outputs[0] == v : k.anchor->inputs[0] == v;
    if (!cpu_conv_takes_channels_last(k)) return false;
    if (v->type.shape[2] * v->type.shape[3] > max_plane) {
      // A larger plane: only between convolutions wider than 1x1 of many multiply-adds a
      // position (1x1 ones run faster on the NCHW GEMM there).
      const std::optional<kernels::Conv2dShape> cs = conv2d_shape(*k.anchor);
      if (cs->groups > 1 || cs->kh * cs->kw == 1 || cs->c_in * cs->kh * cs->kw < least_k)
        return false;
      // Its writer must be one that runs the direct kernel in NCHW too (the same tiles; the
      // engine over padded planes ran a ResNet stem's 32 x 32 output 45.7 us in NCHW, 56.2
      // on conv2d_nhwc).
      if (writes && !kernels::direct_conv_channels_fit(*cs) && !kernels::direct_conv_fits(*cs))
        return false;
    }
    // The writer: the kernel's one stored value, through its epilogue.
    if (writes) return k.outputs[0] == v;
    // A reader: the convolution's input or an operand of its epilogue, not its weights or
    // bias.
    for (size_t i = 1; i < k.anchor->inputs.size(); ++i)
      if (k.anchor->inputs[i] == v) return false;
    return true;
  });
}

} // namespace vtc
