// What the kernel-call emitters of each kind share (codegen-internal): the kernel and its
// accessor emitter, the anchor's output accessor through the epilogue, and the test for
// running over image planes flattened to one row. One file per family of kinds implements
// the functions declared here: gemm_calls.cpp, window_calls.cpp, row_calls.cpp,
// attention_calls.cpp, and
// kernel_call.cpp (elementwise kernels, resize, dispatch).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "codegen/kernel_call.h"
#include "kernels/common/window_shapes.h"
#include "kernels/cuda/gemm_tc.h"
#include "kernels/cuda/reduce.h"

namespace vtc {

class KernelContext {
public:
  KernelContext(const Kernel& k, AccessorEmitter& g);

  const Kernel& kernel;
  AccessorEmitter& g;

  // The anchor's output accessor: `post` and the epilogue stored, or the value itself; into
  // `into` instead of the chain's last value's storage when given.
  Acc output(const PostOp& post = {}, const Acc* into = nullptr);

  // Whether the kernel can run over its result planes [h, w] flattened to one row: every
  // value its nodes read or write spans the plane or is constant over it (the anchor's inputs
  // from `anchor_own` on, and normalisation parameters, aside), and every one in memory can be
  // composed with the flattening and keeps its planes contiguous.
  bool plane_flattens(int64_t h, int64_t w, size_t anchor_own) const;

  // Sets the emitter's flattened plane for the life of the scope.
  struct FlatPlaneScope {
    AccessorEmitter& g;
    FlatPlaneScope(AccessorEmitter& gen, int64_t h, int64_t w) : g(gen) {
      g.flat_plane = std::pair{h, w};
    }
    ~FlatPlaneScope() { g.flat_plane.reset(); }
  };
};

// Gemm's alpha and beta * C applied to the product (C read at the output's broadcast index).
PostOp gemm_post(const Node& gemm, AccessorEmitter& g);

// "RowsShape{rows, d, eps}" (the cuda row kernels' shape; eps exactly).
std::string rows_shape_text(const kernels::RowsShape& s);

// The call of a tensor-core product on cuda, `function<bm, bn>(operands..., tc_workspace(ws,
// plan), [shape,] plan)` (gemm_tc, conv2d_tc), with the plan's launch and workspace; `shape`, when
// given, is the kernel's own shape argument before the plan.
KernelCall tc_call(const std::string& function, std::vector<std::string> operands,
                   kernels::TcPlan plan, const std::string& shape = "");

// Per kind: whether the templates take the kernel, and its calls (spelled for the kernel
// library of the emitter's dialect).
bool gemm_supported(const Kernel& k);
std::vector<KernelCall> gemm_calls(KernelContext& c);
bool window_supported(const Kernel& k); // Conv, MaxPool, AveragePool, global pooling
// A 1-D or 2-D Conv's shape over [n, c, h, w] planes (a 1-D one's height 1, its planes not
// flattened); nullopt for other ranks.
std::optional<kernels::Conv2dShape> conv2d_shape(const Node& conv);
// Whether the cpu target runs Conv `conv` of shape `s` on the Winograd kernel
// (kernels/cpu/conv_winograd.h): f32 operands and a shape conv_shape.h's winograd_conv_fits()
// takes; $VTC_CPU_WINOGRAD "0" never (to compare). A shape rule alone, so that every strategy
// and layout runs the same kernel and gets the same bits.
bool cpu_conv_runs_winograd(const Node& conv, const kernels::Conv2dShape& s);
std::vector<KernelCall> window_calls(KernelContext& c);
bool row_supported(const Kernel& k); // Softmax, LogSoftmax, LayerNormalization, Reduce*
std::vector<KernelCall> row_calls(KernelContext& c);
bool attention_supported(const Kernel& k); // the attention subgraph (attention_pattern.h)
std::vector<KernelCall> attention_calls(KernelContext& c);
// Resize by tap tables (cpu dialect only): float data, constant roi, scales and sizes.
bool resample_supported(const Node& resize);
std::vector<KernelCall> resample_calls(KernelContext& c);

} // namespace vtc
