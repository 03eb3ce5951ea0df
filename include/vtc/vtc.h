// The public C++ API of vtc: load an ONNX model into a Session, which imports, lowers and
// compiles it once, then run it any number of times on named tensors.
//
//   vtc::Options options;                       // target cpu, strategy greedy
//   options.donate = {"past_k", "past_v"};      // KV cache updated in place
//   vtc::Session session("llama.onnx", options);
//   session.run({{"x", vtc::TensorView::of(x)}, ...},       // inputs, zero-copy
//               {{"y", vtc::TensorView::of(y)}, ...});      // caller-owned outputs
//
// Tensors cross the API as TensorView (dtype, shape, pointer; the caller owns the memory) or
// as vtc::Tensor (an owning host tensor). Inputs and caller-provided outputs are bound to the
// compiled program without copies. A donated input's buffer is the buffer of the output the
// program aliases to it: binding that output to the input's own memory updates it in place;
// binding it elsewhere copies the input there first and leaves the input untouched. Errors
// (unknown, missing or mistyped tensors, models vtc cannot compile) throw vtc::Error with a
// message that names the tensor. A Session is not safe to run from two threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vtc/dtype.h"
#include "vtc/error.h"
#include "vtc/options.h"
#include "vtc/tensor.h"

namespace vtc {

class Graph;
struct Program;
struct TranslationUnit;

// A tensor the caller owns: element type, shape and the address of dense row-major data.
struct TensorView {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  void* data = nullptr;

  TensorType type() const { return {dtype, shape}; }
  int64_t numel() const { return shape_numel(shape); }
  size_t nbytes() const { return type().nbytes(); }
  static TensorView of(Tensor& t) { return {t.dtype(), t.shape(), t.raw()}; }
};

using ViewMap = std::map<std::string, TensorView>;
using HostTensorMap = std::map<std::string, Tensor>;

// A graph input or output: its name and type.
struct TensorSpec {
  std::string name;
  TensorType type;
  bool donated = false;      // inputs: named in Options::donate
  std::string aliased_input; // outputs: the donated input whose buffer holds it, if any
};

// One node the library rule put on a library (cuDNN, cuBLASLt), profiled against vtc's own
// kernel: the device milliseconds of its steps in each plan (its kernel step and the copies
// that feed only it), and which the kept plan runs.
struct ProfiledNode {
  std::string node, library;
  double library_ms = 0, vtc_ms = 0;
  bool on_library = true;
};

// What the profiled choice of the greedy plan measured (Options::profile), median device
// milliseconds: the greedy program under the library rule; where that puts any node on a
// library, the greedy program with every kernel on vtc's code and, where the nodes' step times
// split between the two, the one taking the faster for each node (0: not timed); the
// all-physical program of the implementations kept; and which was kept.
struct ProfiledPlan {
  double greedy_ms = 0, physical_ms = 0;
  double vtc_kernels_ms = 0, per_node_ms = 0;
  std::vector<ProfiledNode> nodes;
  // "greedy", "greedy, vtc's kernels", "greedy, per node" or "all-physical".
  std::string kept = "greedy";
  bool kept_physical = false;
  // The choice was read from the compile cache (made by an earlier session of the same
  // program on the same device), not timed now.
  bool from_cache = false;
};

class Session {
public:
  // Imports, canonicalises, lowers and compiles `model_path` (an ONNX file).
  Session(const std::string& model_path, Options options = {});
  // Compiles an already lowered program of `graph` (which it keeps): for tools and tests
  // that build a Program by other means. `options.target` must compile (cpu).
  Session(std::unique_ptr<Graph> graph, Program program, Options options = {});
  // The same with its translation unit given (one entry point per step) instead of generated.
  Session(std::unique_ptr<Graph> graph, Program program, TranslationUnit unit,
          Options options = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;

  // Runs on caller-owned memory: every input and every output must be given, with the
  // model's dtype and shape. Outputs are written in place.
  void run(const ViewMap& inputs, const ViewMap& outputs);
  // Allocates the outputs. Donated inputs given as views may be overwritten.
  HostTensorMap run(const ViewMap& inputs);
  // Allocates the outputs and never modifies `inputs` (donated inputs are copied first).
  HostTensorMap run(const HostTensorMap& inputs);

  // Bytes of the intermediate arena (0 for target ref, which plans no memory).
  int64_t peak_bytes() const;
  // Bytes of the model's constants (weights).
  int64_t constant_bytes() const;
  // Bytes of device memory the compiled kernels hold besides the arena and the constants
  // (split-K partial sums, cuDNN's scratch and workspace); 0 on the cpu. workspace_parts()
  // names each part (empty on the cpu).
  int64_t workspace_bytes() const;
  std::vector<std::pair<std::string, int64_t>> workspace_parts() const;
  // Seconds spent in each step of program() in the last run (empty for target ref).
  const std::vector<double>& last_step_times() const;
  // Milliseconds the last run took on the GPU, timed by CUDA events on vtc's stream from
  // binding the inputs to copying out the outputs; negative on targets without a device.
  double last_run_device_ms() const;
  // Seconds the JIT compiler ran (0 when the shared object came from the cache).
  double compile_seconds() const;
  // The shared objects the compiled kernels were loaded from (0 for target ref).
  int compiled_objects() const;
  // The number of threads kernels run on (Options::threads, or the OpenMP default).
  int threads() const;
  // The timings behind the program kept, when the greedy plan was profiled on the device.
  std::optional<ProfiledPlan> profiled_plan() const;

  bool has_program() const; // false for target ref
  // The lowered program (buffers, steps, operand access); throws for target ref.
  const Program& program() const;
  // Its translation unit (generated source, entry points, libraries); throws for target ref.
  const TranslationUnit& translation_unit() const;
  const Graph& graph() const;
  const Options& options() const;

private:
  Session(std::unique_ptr<Graph> graph, Program program, std::optional<TranslationUnit> unit,
          Options options);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Compiling ahead of time: a model's code built into the cache (Options::cache_dir) without
// running it, so that the first Session on the machine that runs it starts warm. On cuda no
// GPU is needed: `cuda_arch` names the architecture of the GPU that will run it ("sm_90a" for
// H100 / H200; empty: this machine's GPU) and `cuda_driver_version` its driver
// (cuDriverGetVersion's number, 13000 for CUDA 13.0; 0: this machine's driver, or the CUDA
// toolkit's version where there is none). A Session made there with the same model and
// Options finds every kernel in the cache.
struct AheadOfTime {
  std::string cuda_arch;
  int cuda_driver_version = 0;
};
struct CompiledAhead {
  std::string arch;    // what the code was built for: "sm_90a", or "host" on cpu
  int kernels = 0;     // entry points (cuda) or distinct kernels (cpu)
  int objects = 0;     // cubins (cuda) or shared objects (cpu, parts of a few kernels)
  bool cached = false; // all of them were in the cache already
  double seconds = 0;  // compile time (0 when cached)
};
CompiledAhead compile_ahead(const std::string& model_path, const Options& options,
                            const AheadOfTime& ahead = {});

} // namespace vtc
