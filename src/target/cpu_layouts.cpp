// Tensors held channels-last on the cpu target (see cpu_layouts.h).
#include "target/cpu_layouts.h"

#include <cstdlib>
#include <string>

#include "codegen/kernel_calls.h"
#include "target/channels_last_hold.h"

namespace vtc {

namespace {

// The largest plane (h * w) a tensor held channels-last has.
constexpr int64_t kChannelsLastMaxPlane = 16;
// A larger plane, when every convolution touching it is wider than 1x1 and multiplies at
// least this many values a position (c_in * kh * kw).
constexpr int64_t kChannelsLastMinK = 64;

} // namespace

void choose_cpu_channels_last(Program& p) {
  const char* env = std::getenv("VTC_CPU_HOLD_CHANNELS_LAST");
  if (env && std::string(env) == "0") return;
  const char* most = std::getenv("VTC_CPU_CHANNELS_LAST_PLANE");
  const int64_t max_plane = most && *most ? std::atoll(most) : kChannelsLastMaxPlane;
  const char* min_k = std::getenv("VTC_CPU_CHANNELS_LAST_MIN_K");
  const int64_t least_k = min_k && *min_k ? std::atoll(min_k) : kChannelsLastMinK;
  hold_channels_last(p, [&](const StepInfo& s, const Value* v, bool writes) {
    if (s.kind != StepKind::kernel || !s.kernel || !cpu_conv_takes_channels_last(*s.kernel))
      return false;
    const Kernel& k = *s.kernel;
    if (v->type.shape[2] * v->type.shape[3] > max_plane) {
      // A larger plane: only between convolutions wider than 1x1 of many multiply-adds a
      // position (1x1 ones run faster on the NCHW GEMM there).
      const std::optional<kernels::Conv2dShape> cs = conv2d_shape(*k.anchor);
      if (cs->groups > 1 || cs->kh * cs->kw == 1 || cs->c_in * cs->kh * cs->kw < least_k)
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
