// The paper's input to data-movement elimination: a graph of compute kernels (each one main
// compute node with the elementwise nodes fused into it as prologue and epilogue, or a group
// of elementwise nodes alone) and the data-movement nodes between them, in execution order.
// It is a view over a Graph: kernels and steps point at the Graph's nodes and values.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace vtc {

enum class KernelKind {
  gemm,        // MatMul, Gemm
  conv,        // Conv
  pool,        // MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool
  norm,        // LayerNormalization, BatchNormalization, InstanceNormalization, ...
  softmax,     // Softmax, LogSoftmax
  reduce,      // Reduce*, ArgMax, ArgMin
  attention,   // MatMul(Q, K^T), scale, softcap, mask, Softmax, MatMul(P, V): attention_pattern.h
  elementwise, // only elementwise nodes
  other,       // any other compute node (Resize, Trilu, ...), run alone
};

const char* kernel_kind_name(KernelKind k);

// Who does a kernel's arithmetic: a vtc kernel template over accessors (operands may be
// virtual), or a library call on dense physical operands (OpenBLAS sgemm / sgemv for f32
// matrix products on cpu; cuDNN for 16-bit convolutions on cuda, or cuBLASLt for pointwise
// ones, whose output a generated epilogue stores). Chosen per kernel before any strategy runs,
// so that every strategy runs the same arithmetic.
enum class KernelImpl { vtc_template, openblas_sgemm, cudnn_conv, cublaslt_conv };

const char* kernel_impl_name(KernelImpl i);

// Whether a library computes the convolution's raw product (cuDNN or cuBLASLt).
inline bool library_conv_impl(KernelImpl i) {
  return i == KernelImpl::cudnn_conv || i == KernelImpl::cublaslt_conv;
}

struct Kernel {
  std::string name;
  KernelKind kind = KernelKind::other;
  Node* anchor = nullptr;      // the main compute node; null for an elementwise kernel
  std::vector<Node*> nodes;    // every fused node, in execution order (anchor included)
  std::vector<Value*> inputs;  // values the kernel reads from memory (constants included)
  std::vector<Value*> outputs; // values the kernel writes to memory
  KernelImpl impl = KernelImpl::vtc_template;
};

// One step of execution: a kernel, or a data-movement node (a copy kernel until a strategy
// makes its result virtual).
struct Step {
  bool is_kernel = true;
  int index = 0; // into KernelGraph::kernels or KernelGraph::movement
};

struct KernelGraph {
  const Graph* graph = nullptr;
  std::vector<Kernel> kernels;
  std::vector<Node*> movement;
  std::vector<Step> steps; // execution order

  // The kernel that writes `v`, or nullptr (graph input, constant, data-movement output).
  const Kernel* producer_kernel(const Value* v) const;
  // The data-movement node that writes `v`, or nullptr.
  const Node* producer_movement(const Value* v) const;
};

} // namespace vtc
