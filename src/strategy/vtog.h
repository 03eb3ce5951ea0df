// The virtual tensor opportunity graph (paper §5.1). Its nodes are the tensors of a
// KernelGraph; its edges come from the data-movement rules (mapping/rules.h) applied to every
// data-movement node in both directions. An edge u -> b says "u may be virtual of b": u's
// elements live in b's storage at the positions the edge's mapping gives.
//
// Edges come in *options*: one rule mapping that makes one tensor virtual as a whole, e.g. the
// write side of Split(a) -> q, k, v is the option "a virtual of {q, k, v}" with three edges
// (a -> q, a -> k, a -> v over disjoint guards). A tensor is virtual through exactly one option:
// two out-edges of a tensor from different options conflict when their guards overlap (one
// virtual index may map to only one base), and those pairs form the conflict set. Options are
// of three kinds:
//   read      an output of the node virtual of its inputs (consumers read the inputs)
//   write     an input of the node virtual of its outputs (the producer writes into them)
//   in_place  ScatterND/ScatterElements: the output is the data tensor itself, updated in
//             place (the paper's "output virtual of data", Type I); the scatter then only
//             writes the updates, or nothing when the updates are written by their producer.
//
// The copy work of a data-movement node is split into *units*, one per (data input, output)
// pair that moves elements (Split: one per output; Concat: one per input; ScatterND: the data
// clone and the updates; Pad: the interior and the border fill). An option *realizes* the
// units it makes unnecessary; a node whose units are all realized is eliminated, otherwise it
// runs as a copy kernel over its remaining units.
//
// The VTOG also fixes the execution schedule the strategy reasons with: the KernelGraph's
// steps, with the producers of index tensors (read by mappings through load()) hoisted as early
// as their own inputs allow, so that a kernel writing through a ScatterND mapping finds its
// indices computed.
#pragma once

#include <set>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mapping/contiguity.h"
#include "mapping/mapping.h"
#include "passes/kernel_graph.h"

namespace vtc {

enum class OptionKind { read, write, in_place };
const char* option_kind_name(OptionKind k);

struct VtogTensor {
  const Value* value = nullptr;
  const Base* base = nullptr; // value_base(value)
  int64_t bytes = 0;
  int elem_bytes = 0;
  int producer_step = -1; // position in Vtog::schedule; -1 for graph inputs and constants
  bool graph_input = false, constant = false, graph_output = false, donated = false;
  // Loaded through load() or a search by some option's mapping: index tensors stay physical.
  bool index = false;
  // An operand of a kernel the target runs on physical operands only.
  bool physical_only = false;
  std::vector<int> options;             // options that make this tensor virtual
  std::vector<int> out_edges, in_edges; // edges from / to this tensor
  std::vector<int> reader_steps;        // steps that read it (kernels and copies), ascending
};

struct VtogUnit {
  int movement = 0;      // index into KernelGraph::movement
  int in = -1, out = -1; // tensors; in = -1 for Pad's border fill
  int in_slot = -1, out_slot = 0;
  double read_fraction = 1;  // of `in` the copy reads
  double write_fraction = 1; // of `out` the copy writes
  int64_t extra_bytes = 0;   // index tensors the copy reads
  int64_t bytes = 0;         // read + written + extra: what removing the unit saves moving
  // The op's own scatter: the copy writes `out` at run-time positions through this mapping
  // (the updates of ScatterND), which costs what its contiguity says.
  std::optional<Mapping> scatter;
  std::vector<int> realized_by; // options that make this unit unnecessary
};

struct VtogOption {
  int id = 0;
  int tensor = 0;
  int movement = 0; // index into KernelGraph::movement
  OptionKind kind = OptionKind::read;
  int slot = 0; // output slot (read, in_place) or input slot (write)
  Mapping mapping;
  std::vector<int> edges;                    // one per base tensor, in base order
  std::vector<int> units;                    // units it realizes
  Profitability type = Profitability::type1; // the worst type among its edges
  // A unit that must be realized for this option to be legal (ScatterND updates written by
  // their producer need the data updated in place), or -1.
  int requires_unit = -1;
  bool mutates = false; // in-place scatter: the base storage changes under its old readers
  std::vector<std::pair<const Base*, Tensor>> tables; // constant tables the mapping loads
};

struct VtogEdge {
  int id = 0;
  int option = 0;
  int from = 0, to = 0; // tensors: `from` virtual of `to`
  Mapping mapping;      // the option's pieces whose base is `to`
  Contiguity contiguity;
};

struct VtogMovement {
  const Node* node = nullptr;
  int step = 0; // position in Vtog::schedule
  std::vector<int> units;
  std::vector<int> options;
  std::string read_reason, write_reason; // why a direction has no options ("" when it has)
};

// One position of the schedule: a kernel or a data-movement node, and what it accesses.
struct VtogAccess {
  int tensor = 0;
  bool write = false;
  int unit = -1; // copy accesses belong to a unit; kernel operands have -1
};

struct VtogStep {
  Step step;
  std::vector<VtogAccess> accesses;
};

struct VtogOptions {
  std::vector<std::string> donated; // graph inputs the caller lets vtc overwrite
  // Values that must stay physical: operands of kernels the target cannot read or write
  // through a mapping (ops it runs on the reference interpreter).
  std::set<const Value*> physical_only;
  int64_t transaction_bytes = kCpuCacheLineBytes; // edge types: 64-byte lines on CPU, 32 on GPU
};

struct Vtog {
  const KernelGraph* kg = nullptr;
  std::vector<VtogTensor> tensors;
  std::vector<VtogOption> options;
  std::vector<VtogEdge> edges;
  std::vector<std::pair<int, int>> conflicts; // edge pairs, first < second, sorted
  std::vector<VtogUnit> units;
  std::vector<VtogMovement> movement; // parallel to KernelGraph::movement
  std::vector<VtogStep> steps;        // the schedule
  std::vector<int> kernel_step;       // KernelGraph::kernels index -> schedule position
  int64_t transaction_bytes = kCpuCacheLineBytes;

  // The tensor of `v`, or -1 when the KernelGraph does not touch it.
  int tensor_of(const Value* v) const;
  int tensor_of(const Base* b) const;
  std::string tensor_name(int t) const { return tensors[size_t(t)].value->name; }
  std::string edge_name(int e) const;

  std::unordered_map<const void*, int> by_value; // Value* -> tensor (lookups only)
};

// Builds the VTOG of every data-movement node of `kg` (which must outlive the result). Throws
// vtc::Error naming the value when a donated name is not a graph input.
Vtog build_vtog(const KernelGraph& kg, const VtogOptions& options = {});

// Stable text form: the schedule, then one line per edge and per conflict:
//   edge 3: b -> a  read  Split 'split'  Type I  [0:1, 0:64] -> a[i0, i1 + 64]
//   conflict: edge 3 (b -> a) x edge 5 (b -> c)
std::string print_vtog(const Vtog& g);

// Units of a data-movement node (vtog_units.cpp): what its copy kernel moves, split by
// (data input, output) pair. Appends to g.units and g.movement[m].units.
void add_movement_units(Vtog& g, int m);

} // namespace vtc
