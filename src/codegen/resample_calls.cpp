// Kernel calls of Resize by tap tables (kernels/cpu/resample.h) on the cpu target: every mode and
// coordinate transformation, the taps computed here from the node's constant roi, scales and
// sizes with the reference interpreter's rules (ops/resize_taps.h) and emitted as constant
// arrays. Nearest upsampling by whole factors keeps its own kernel (kernel_call.cpp).
#include <string>

#include "codegen/kernel_calls.h"
#include "ops/resize_taps.h"
#include "vtc/error.h"

namespace vtc {

namespace {

// Input k of n as a constant tensor; null when absent or empty. `known` is cleared when the
// input is given but is not a constant.
const Tensor* constant_input(const Node& n, size_t k, bool& known) {
  const Value* v = n.input(k);
  if (!v || v->type.numel() == 0) return nullptr;
  if (!v->constant) {
    known = false;
    return nullptr;
  }
  return &*v->constant;
}

struct ResizeInputs {
  const Tensor* roi = nullptr;
  const Tensor* scales = nullptr;
  const Tensor* sizes = nullptr;
  bool known = true;
};

ResizeInputs resize_inputs(const Node& n) {
  ResizeInputs r;
  if (resize_has_roi_input(n)) {
    r.roi = constant_input(n, 1, r.known);
    r.sizes = constant_input(n, kResizeSizesInput, r.known);
  }
  r.scales = constant_input(n, resize_scales_input(n), r.known);
  return r;
}

} // namespace

bool resample_supported(const Node& n) {
  if (n.op != "Resize" || n.attr_int("antialias", 0) != 0) return false;
  const DType t = n.inputs[0]->type.dtype;
  if (!is_float(t) || n.outputs[0]->type.rank() < 1) return false;
  return resize_inputs(n).known;
}

std::vector<KernelCall> resample_calls(KernelContext& c) {
  const Node& n = *c.kernel.anchor;
  VTC_CHECK(resample_supported(n)) << n.describe() << ": not a Resize the tap tables take";
  ResizeInputs in = resize_inputs(n);
  const ResizeTaps t = resize_taps(n, n.inputs[0]->type.shape, in.roi, in.scales, in.sizes);
  const size_t r = t.out.size();
  std::vector<std::string> locals;
  std::string axes;
  for (size_t d = 0; d < r; ++d) {
    size_t width = 1;
    bool outside = false;
    for (size_t o = 0; o < t.taps[d].size(); ++o) {
      width = std::max(width, t.taps[d][o].size());
      outside = outside || t.outside[d][o];
    }
    std::string index, weight, flags;
    for (size_t o = 0; o < t.taps[d].size(); ++o) {
      for (size_t j = 0; j < width; ++j) {
        const bool tap = j < t.taps[d][o].size();
        index += std::to_string(tap ? t.taps[d][o][j].first : 0) + ",";
        weight += (tap ? literal(t.taps[d][o][j].second) : std::string("0")) + ",";
      }
      flags += t.outside[d][o] ? "true," : "false,";
    }
    const std::string s = std::to_string(d);
    locals.push_back("static constexpr int64_t index" + s + "[] = {" + index + "};");
    locals.push_back("static constexpr double weight" + s + "[] = {" + weight + "};");
    if (outside) locals.push_back("static constexpr bool outside" + s + "[] = {" + flags + "};");
    axes += (d ? ", " : "") + std::string("ResampleAxis{") + std::to_string(width) + ", index" + s +
            ", weight" + s + ", " + (outside ? "outside" + s : std::string("nullptr")) + "}";
  }
  locals.push_back("const ResampleAxis axes[] = {" + axes + "};");
  KernelCall call{"resample",
                  {},
                  {c.output().init, c.g.value(n.inputs[0]).init, shape_array(t.out), "axes",
                   literal(t.extrapolation)}};
  call.locals = locals;
  return {call};
}

} // namespace vtc
