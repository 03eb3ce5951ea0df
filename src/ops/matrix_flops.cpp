// Matrix arithmetic of a node (see matrix_flops.h), from its inferred shapes.
#include "ops/matrix_flops.h"

namespace vtc {

int64_t matrix_flops(const Node& n) {
  if (n.inputs.size() < 2 || !n.inputs[0] || !n.inputs[1] || n.outputs.empty() || !n.outputs[0])
    return 0;
  const Shape& a = n.inputs[0]->type.shape;
  const Shape& w = n.inputs[1]->type.shape;
  const int64_t out = shape_numel(n.outputs[0]->type.shape);
  if (n.op == "MatMul") return a.empty() ? 0 : 2 * out * a.back();
  if (n.op == "Gemm") {
    if (a.size() != 2) return 0;
    return 2 * out * (n.attr_int("transA", 0) ? a[0] : a[1]);
  }
  if (n.op == "Conv") {
    int64_t taps = 1;
    for (size_t d = 1; d < w.size(); ++d)
      taps *= w[d]; // input channels per group x the kernel's spatial extents
    return 2 * out * taps;
  }
  return 0;
}

} // namespace vtc
