// A Program: a model lowered for a compiled target, as data only. Physical buffers (inputs,
// outputs, constants, intermediates — virtual tensors have none), the storage of every value
// (its buffer, or its mapping onto physical values), and the steps that run in order: a
// kernel with each operand's access described, a data-movement node that stays a copy, a
// constant copied into a graph output, nodes the reference interpreter runs on physical
// operands, or the range check of a run-time index tensor before anything reads through it. A
// target's code generator turns a Program into a translation unit (codegen/translation_unit.h); the
// memory planner needs only buffers and steps.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "mapping/mapping.h"
#include "passes/kernel_graph.h"

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

// Where each value lives: physical values in a buffer, virtual ones through a mapping onto
// physical values (bases are value_base(Value*)).
struct StorageMap {
  std::map<const Value*, int> buffer_of;
  std::map<const Value*, Mapping> virtual_values;
  // Physical 4-D values held in their buffer channels-last: [n, c, h, w] stored as [n, h, w, c]
  // (the cuda target's choice, for tensors only cuDNN's channels-last convolutions touch:
  // choose_channels_last in target/cuda_layouts.h). Kernels reach them through
  // channels_last_storage, never as dense.
  std::set<const Value*> channels_last;
};

// How a kernel touches one value.
enum class AccessKind {
  physical, // dense in its own buffer
  mapped,   // a virtual tensor: read or written through its mapping onto physical values
  prologue, // computed inside the kernel by a fused elementwise node, never in memory
  epilogue, // the anchor's result, passed through a fused chain before it is stored
};
const char* access_kind_name(AccessKind k);

struct OperandAccess {
  const Value* value = nullptr;
  AccessKind kind = AccessKind::physical;
  int buffer = -1;                // physical: the value's buffer
  std::optional<Mapping> mapping; // mapped: onto physical values
  const Node* producer = nullptr; // prologue: the fused node computing it
  std::vector<const Node*> chain; // epilogue: the fused nodes applied before the store, in order
};

enum class StepKind {
  kernel,          // a fused compute kernel
  copy,            // a data-movement node that stayed physical
  constant_output, // a graph output folded to a constant, copied from its constant buffer
  interpreter,     // nodes run by the reference interpreter on physical operands
  index_check,     // a run-time index tensor checked against the dims it indexes
};
const char* step_kind_name(StepKind k);

// One dimension a run-time index tensor indexes: its size, and its axis for the error.
struct IndexBound {
  int64_t size = 0;
  int64_t axis = 0;
};

// The indices a node reads at run time (Gather, GatherElements, GatherND, ScatterND,
// ScatterElements), checked before any step reads through them: every element of `indices`
// lies in [-size, size) of bounds[0], or, with one bound per tuple element (GatherND and
// ScatterND), of bounds[c] where c is the element's last coordinate. A failure is the
// reference interpreter's error (index_out_of_range in ops).
struct IndexCheck {
  const Node* node = nullptr;
  const Value* indices = nullptr;
  std::vector<IndexBound> bounds;

  // The bound element `flat` of the indices is checked against.
  const IndexBound& bound_of(int64_t flat) const {
    return bounds[bounds.size() == 1 ? 0 : size_t(flat % int64_t(bounds.size()))];
  }
};

struct StepInfo {
  std::string name; // "k3 gemm [MatMul 'proj']" or "copy Transpose 't'"
  StepKind kind = StepKind::kernel;
  std::optional<Kernel> kernel;        // kernel steps
  const Node* node = nullptr;          // copy steps
  std::vector<OperandAccess> operands; // kernel steps: every value it reads or writes
  // Interpreter steps: these nodes in order (values they produce that have no buffer live
  // only during the step).
  std::vector<const Node*> fallback;
  // Index-check steps: what is checked (operands[0] is how the indices are read).
  std::optional<IndexCheck> check;
  bool is_copy = false;    // a data-movement node that stayed physical
  std::vector<int> reads;  // buffer ids
  std::vector<int> writes; // buffer ids
  int64_t bytes = 0;       // estimated bytes moved (for reports)
  int64_t flops = 0;       // estimated arithmetic (for reports)
};

struct Program {
  std::vector<BufferInfo> buffers;
  std::vector<StepInfo> steps;
  StorageMap storage;
  std::vector<int> inputs;  // buffer ids of the graph inputs, in graph order
  std::vector<int> outputs; // buffer ids of the graph outputs, in graph order
  std::string strategy;     // name of the strategy that produced it

  int find_buffer(const std::string& name) const;
  // The pointer-table slots after the buffers' (buf[status_slot()], buf[status_slot() + 1]):
  // the run's IndexFailure record (kernels/common/index_check.h) where kernels read it, and
  // where the host reads it (the same record in host memory; on a device, host memory the
  // device writes).
  int status_slot() const { return int(buffers.size()); }
};

// The program as text: buffers, then each step with its operands' access (`vtc opt
// --print-after=lower`).
std::string print_program(const Program& p);

} // namespace vtc
