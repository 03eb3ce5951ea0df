// A Program: a model lowered for a compiled target. Physical buffers (inputs, outputs,
// constants, intermediates — virtual tensors have none), the steps that run in order (each a
// generated function, or a node the reference interpreter runs on physical operands), and
// the generated C++ translation unit that defines the step functions.
//
// Every generated step function has the signature
//   extern "C" void <entry>(void* const* buffers, void* packs);
// where packs is the executor's kernels::ConstantPacks (constant operands packed once), and
// buffers[i] is the address of buffer i (nullptr never occurs at run time).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace vtc {

enum class BufferRole { input, output, constant, intermediate };
const char* buffer_role_name(BufferRole r);

struct BufferInfo {
  std::string name;
  TensorType type;
  BufferRole role = BufferRole::intermediate;
  const Value* value = nullptr; // the graph value it stores
  int alias_of = -1;            // an output aliased to a donated input's buffer (that input's id)
};

struct StepInfo {
  std::string name;  // "k3 gemm [MatMul 'proj']" or "copy Transpose 't'"
  std::string entry; // generated function name; empty for a fallback step
  // When not empty, the step runs these nodes on the reference interpreter instead (in order;
  // values they produce that have no buffer live only during the step).
  std::vector<const Node*> fallback;
  bool is_copy = false;    // a data-movement node that stayed physical
  std::vector<int> reads;  // buffer ids
  std::vector<int> writes; // buffer ids
  int64_t bytes = 0;       // estimated bytes moved (for reports)
  int64_t flops = 0;       // estimated arithmetic (for reports)
};

struct Program {
  std::vector<BufferInfo> buffers;
  std::vector<StepInfo> steps;
  std::string source;       // the generated C++ translation unit
  std::vector<int> inputs;  // buffer ids of the graph inputs, in graph order
  std::vector<int> outputs; // buffer ids of the graph outputs, in graph order
  std::string strategy;     // name of the strategy that produced it
  // Libraries the generated translation unit calls (linked as -l<name>): "openblas" when a
  // kernel is a library kernel.
  std::vector<std::string> libraries;

  int find_buffer(const std::string& name) const;
};

} // namespace vtc
