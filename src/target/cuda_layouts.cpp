// Tensors held channels-last on the cuda target (see cuda_layouts.h).
#include "target/cuda_layouts.h"

#include <cstdlib>
#include <string>

#include "codegen/library_conv.h"
#include "kernels/cuda/conv_direct.h"
#include "target/channels_last_hold.h"

namespace vtc {

namespace {

// Whether step s is a cuDNN convolution run channels-last.
bool channels_last_conv(const StepInfo& s) {
  if (s.kind != StepKind::kernel || !s.kernel || s.kernel->impl != KernelImpl::cudnn_conv)
    return false;
  const std::optional<LibraryConvShape> form = library_conv_form(*s.kernel);
  return form && cudnn_channels_last(form->shape);
}

// Whether step s is a convolution on conv2d_direct (a stem), which stores a pixel's channels
// as one vector where they lie side by side.
bool direct_conv(const StepInfo& s) {
  if (s.kind != StepKind::kernel || !s.kernel || s.kernel->impl != KernelImpl::vtc_template)
    return false;
  const std::optional<LibraryConvShape> form = library_conv_form(*s.kernel);
  return form && kernels::conv2d_direct_fits(form->shape);
}

} // namespace

void choose_channels_last(Program& p) {
  const char* env = std::getenv("VTC_CUDA_HOLD_CHANNELS_LAST");
  if (env && std::string(env) == "0") return;
  hold_channels_last(p, [](const StepInfo& s, const Value* v, bool writes) {
    if (!channels_last_conv(s) && !(writes && direct_conv(s))) return false;
    const Kernel& k = *s.kernel;
    // The writer: the kernel's one stored value, through its epilogue.
    if (writes) return k.outputs.size() == 1 && k.outputs[0] == v;
    // A reader: the convolution's input, and nothing else of it.
    return k.anchor->inputs[0] == v && k.anchor->inputs[1] != v &&
           (k.anchor->inputs.size() <= 2 || k.anchor->inputs[2] != v);
  });
}

} // namespace vtc
