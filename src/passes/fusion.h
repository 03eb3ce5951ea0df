// Fusion: groups the nodes of a canonical Graph into compute kernels with elementwise
// prologues and epilogues (bias, activation, residual add, scaling, casts, RoPE arithmetic),
// and attention subgraphs into one kernel each where the target asks for it, leaving
// data-movement nodes between kernels. Deterministic: the same graph gives the same
// kernels.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "passes/attention_pattern.h"
#include "passes/kernel_graph.h"

namespace vtc {

// What a target adds to fusion.
struct FuseOptions {
  // Whether a MaxPool that alone consumes a Conv kernel's last value joins that kernel (the
  // target has a kernel that pools the convolution's rows as it computes them). Unset: never.
  std::function<bool(const Node& conv, const Node& max_pool)> max_pool_tail;
  // Whether an attention subgraph (attention_pattern.h) becomes one kernel of kind attention
  // (the target has an attention kernel for its shapes and dtypes); else its nodes fuse as
  // any others. Unset: never.
  std::function<bool(const AttentionPattern&)> attention;
};

KernelGraph fuse(const Graph& g, const FuseOptions& options = {});

// The MaxPool that fusion put at the end of Conv kernel k (FuseOptions::max_pool_tail), or
// null.
const Node* max_pool_tail(const Kernel& k);

// The epilogue of kernel k: its nodes after the anchor that depend on the anchor's value, in
// order (a MaxPool tail left out). Empty for an elementwise kernel.
std::vector<const Node*> epilogue_chain(const Kernel& k);

// Whether fusion treats `node` as elementwise: the op table's elementwise ops, and
// inference-mode BatchNormalization (its parameters broadcast along the channel axis).
bool is_fusible_elementwise(const Node& node);

// Stable text form, one line per step:
//   kernel k3 gemm [MatMul 'proj', Add 'bias', Relu 'act'] (%x, %w, %b) -> (%y)
//   move   Reshape 'r' (%y) -> (%y2)
std::string print_kernel_graph(const KernelGraph& kg);

} // namespace vtc
