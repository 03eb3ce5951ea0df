// Kernel calls: for each fused kernel, the call of a kernel template (or library routine) with
// its accessors and shape arguments, chosen by the kind fusion computed. Whether a target's
// templates take a kernel is decided on the kernel's structure (ops, attributes, ranks)
// before any code is generated, so a strategy knows which operands must stay physical.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/accessor_emitter.h"
#include "codegen/library_conv.h"
#include "kernels/cuda/common.h"
#include "passes/attention_pattern.h"
#include "passes/kernel_graph.h"

namespace vtc {

// One call statement: function<template_args...>(args...), each argument an expression
// (an accessor's construction, a shape, a constant), with the locals it names.
struct KernelCall {
  KernelCall() = default;
  KernelCall(std::string f, std::vector<std::string> t, std::vector<std::string> a)
      : function(std::move(f)), template_args(std::move(t)), args(std::move(a)) {}

  std::string function;
  std::vector<std::string> template_args;
  std::vector<std::string> args;
  // Declarations the arguments name (static offset tables); the call then sits in a block.
  std::vector<std::string> locals;
  bool block = false; // in a block of its own even without locals
  // A condition over `buf` the call runs under; empty: always.
  std::string guard;
  // Where the call is a GPU kernel of its own (Dialect::entry_per_call): its grid, block and
  // dynamic shared memory (the kernel's *_launch of its shape), and the bytes of zeroed
  // workspace it is given as `ws` (split-K partial sums and counters; 0: none): the first
  // workspace_partial_bytes it writes before it reads them, the rest are counters that start
  // and are left zero, so launches one after another may share them.
  std::optional<kernels::Launch> launch;
  int64_t workspace_bytes = 0;
  int64_t workspace_partial_bytes = 0;
  // Its `ws` is the executor's staging buffer instead (a library convolution's input, written
  // here and read by the library call after it).
  bool writes_staging = false;
  // A convolution the executor runs through cuDNN instead of a generated kernel (no text):
  // it writes the raw product into the step's scratch, which the step's next call reads.
  std::optional<LibraryConvCall> library_conv;

  std::string render() const;
};

// Whether the kernel templates (kernels/cpu, kernels/cuda) have code for kernel `k`; the
// others run on the reference interpreter, with physical operands.
bool generates_kernel(const Kernel& k);
// Whether kernel k is a Resize the tap-table kernel computes (kernels/cpu/resample.h; the cuda
// kernels have nearest upsampling by whole factors only).
bool resamples_by_taps(const Kernel& k);

// Whether the attention kernels of kernels/cpu and of kernels/cuda take an attention subgraph
// (its shapes and dtypes): the targets' answers to FuseOptions::attention, and their rule for
// kernels of kind attention.
bool cpu_takes_attention(const AttentionPattern& p);
bool cuda_takes_attention(const AttentionPattern& p);

// The calls that compute kernel `k` (which generates_kernel accepts), their accessors emitted
// through `g`, spelled for the kernel library of g's dialect.
std::vector<KernelCall> kernel_calls(const Kernel& k, AccessorEmitter& g);

} // namespace vtc
