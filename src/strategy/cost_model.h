// Cost models for the strategy search (paper §5.2): the latency of one step of the schedule — a
// compute kernel or a data-movement copy — given how each of its operands is accessed (physical,
// or through a composed mapping onto physical tensors). The search only ever asks for the
// latency of steps, so a model may compute it (AnalyticCostModel, the default on CPU and in
// tests) or measure it by generating and timing the step's kernel with those accessors on the
// target device (a profiler model, the paper's choice on GPU).
//
// The analytic model is a roofline over memory traffic:
//   latency = launch + Σ operands  bytes · penalty / bandwidth  + search probes · probe cost
// where an operand read through a mapping moves only the distinct base elements it reaches
// (a GQA Expand reads the KV cache once, not once per query group), and the penalty is the
// cache lines a run of the mapping touches per useful byte (paper §4.3: Type I costs nothing,
// a partially contiguous run of at least a line nearly nothing, short runs up to a line per
// element). A GEMM reads an operand in either orientation (NN or NT), so its penalty is the
// better of the mapping and its transpose in the last two dimensions. Reads of one step that
// reach the same tensor share its lines: together they cost at most that tensor's bytes.
#pragma once

#include <string>
#include <vector>

#include "mapping/contiguity.h"
#include "mapping/mapping.h"
#include "passes/kernel_graph.h"

namespace vtc {

// What the cost of reading or writing through a mapping depends on, computed once per mapping.
struct MappingProfile {
  Contiguity contiguity;
  Contiguity transposed; // with the last two virtual dimensions swapped (= contiguity below rank 2)
  double footprint = 1;  // distinct base elements reached per virtual element (≤ 1)
  double probes = 0;     // search equalities evaluated per virtual element
  double loads = 0;      // index loads per virtual element
  int pieces = 1;
};

MappingProfile profile_mapping(const Mapping& m, int elem_bytes, int64_t transaction_bytes);

struct OperandQuery {
  const Value* value = nullptr;
  bool write = false;
  int64_t bytes = 0; // the share of the value this step reads or writes
  int elem_bytes = 1;
  const Mapping* mapping = nullptr; // null: physical and contiguous
  const MappingProfile* profile = nullptr;
  int64_t extra_bytes = 0;                 // index tensors a copy reads alongside
  const MappingProfile* scatter = nullptr; // a copy writing at run-time positions (ScatterND)
};

struct StepQuery {
  const Kernel* kernel = nullptr; // a compute kernel, or
  const Node* movement = nullptr; // a data-movement node's copy kernel
  bool active = true;             // false: the copy has nothing left to do and is not launched
  std::vector<OperandQuery> operands;
};

class CostModel {
public:
  virtual ~CostModel() = default;
  virtual std::string describe() const = 0;
  // Seconds; 0 for an inactive step.
  virtual double latency(const StepQuery& q) const = 0;
};

struct AnalyticParams {
  double bandwidth = 20e9; // bytes per second a kernel streams from memory
  int64_t line_bytes = kCpuCacheLineBytes;
  double launch = 2e-6;  // seconds per kernel launch (thread-pool dispatch and sync)
  double probe = 0.5e-9; // seconds per search equality evaluated per element
};

class AnalyticCostModel : public CostModel {
public:
  explicit AnalyticCostModel(AnalyticParams p = {}) : p_(p) {}
  std::string describe() const override;
  double latency(const StepQuery& q) const override;
  const AnalyticParams& params() const { return p_; }

  // Bytes actually moved per useful byte for runs of `c` over elements of `elem_bytes`.
  double line_penalty(const Contiguity& c, int elem_bytes) const;

private:
  AnalyticParams p_;
};

} // namespace vtc
