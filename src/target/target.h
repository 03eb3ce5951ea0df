// A Target: everything that differs between the places a model can run. The compiler above
// it (import, fusion, strategy, lowering, the memory plan, accessor emission) is shared; a
// target says which kernels it has code for, which implementation each kernel gets (a
// template over accessors, or a library on physical operands), what fusion may add, the
// memory transaction contiguity is judged by, the dialect its translation units are written
// in, and how a translation unit is compiled, loaded and launched. `ref` (the reference
// interpreter), `cpu` and `cuda` implement it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/dialect.h"
#include "codegen/translation_unit.h"
#include "jit/compile_options.h"
#include "jit/host_compiler.h"
#include "passes/fusion.h"
#include "passes/kernel_graph.h"
#include "target/library_choice.h"
#include "vtc/options.h"

namespace vtc {

// What a step's entry points run on.
struct LaunchArgs {
  // The table of every buffer's address: on cpu in host memory; on cuda the device address
  // of a table, in device memory, of device addresses.
  void* const* buffers = nullptr;
  void* packs = nullptr;  // cpu: the executor's kernels::ConstantPacks
  void* stream = nullptr; // cuda: the CUstream the step's kernels are queued on
  // cuda: the same table in host memory (library calls take their operands' addresses from it).
  const uint64_t* host_buffers = nullptr;
};

// A translation unit compiled and loaded on a target: its entry points, ready to launch.
class LoadedUnit {
public:
  virtual ~LoadedUnit() = default;
  // Runs step `step`'s entry points (TranslationUnit::entries[step], not empty): on cpu it
  // returns when the step is done; on cuda its kernels are queued on args.stream.
  virtual void launch(size_t step, const LaunchArgs& args) = 0;
  // The buffers whose addresses step `step`'s launch reads from LaunchArgs::host_buffers (a
  // library call's operands): the work it queues holds those addresses, so a graph captured of
  // it is replayed only where they cannot change between runs.
  virtual std::vector<int> host_read_buffers(size_t step) const { return {}; }
  // Called once the constants are in place (`host_buffers`: every buffer's address, as in
  // LaunchArgs), before the first launch; work queued on `stream` (cuda) readies what the
  // unit derives from them (a library's weights in the layout it reads).
  virtual void prepare_constants(const uint64_t* /*host_buffers*/, void* /*stream*/) {}
  // Bytes of device memory the unit holds besides the program's buffers (split-K partial sums,
  // a library's scratch and workspace, prepared weights), in all and by what holds them.
  int64_t workspace_bytes() const {
    int64_t bytes = 0;
    for (const auto& [what, b] : workspace_parts())
      bytes += b;
    return bytes;
  }
  virtual std::vector<std::pair<std::string, int64_t>> workspace_parts() const { return {}; }
  // The compiled object: cache key, paths, compile time (0 when it came from the cache).
  const jit::CompiledObject& object() const { return object_; }

protected:
  jit::CompiledObject object_;
};

class Target {
public:
  virtual ~Target() = default;
  virtual TargetKind kind() const = 0;
  // Whether the target compiles programs (false: the reference interpreter runs the graph).
  virtual bool compiles() const = 0;

  // What fusion may add on this target (a max pooling joining its convolution).
  virtual FuseOptions fuse_options() const = 0;
  // Sets Kernel::impl of every kernel (template or library), before any strategy runs.
  virtual void choose_implementations(KernelGraph& kg, const LibraryChoice& choice) const = 0;
  // The values kernel k must find physical because of its implementation.
  virtual std::vector<const Value*> physical_operands(const Kernel& k) const = 0;
  // Whether the target has code for a kernel / for a data-movement node left as a copy; the
  // others run on the reference interpreter, on physical operands.
  virtual bool generates_kernel(const Kernel& k) const = 0;
  virtual bool generates_copy(const Node& n) const = 0;
  // The memory transaction, in bytes, by which a mapping counts as contiguous.
  virtual int64_t transaction_bytes() const = 0;
  // How far (a fraction) the greedy search may let the arena rise above the lowest it has seen
  // to take a move that saves time (see greedy.h); 0: never.
  virtual double peak_slack() const { return 0; }
  // Rewrites the canonical graph for this target before its kernels are planned (the cuda
  // target merges sibling products: merge_sibling_matmuls). Every strategy, and the profiled
  // comparison of plans, lowers the rewritten graph. Default: unchanged.
  virtual void prepare_graph(Graph& /*g*/) const {}
  // Chooses, after lowering, how physical tensors lie in their buffers where not row-major
  // (StorageMap::channels_last; the cuda target's choose_channels_last). Default: row-major.
  virtual void choose_layouts(Program& /*p*/) const {}

  // The dialect of its translation units; throws for a target that compiles nothing.
  virtual const Dialect& dialect() const = 0;
  // Whether its buffers live in device memory (the program runs on DeviceExecutor).
  virtual bool device_memory() const { return false; }
  // How its translation units are compiled for `options` (cache, kernel headers, verbosity;
  // a GPU target uses the cache, include directories and verbosity only).
  virtual jit::CompileOptions compile_options(const Options& options) const = 0;
  // Compiles (or finds in the cache) and loads `unit`.
  virtual std::unique_ptr<LoadedUnit> load(const TranslationUnit& unit,
                                           const jit::CompileOptions& options) const = 0;
};

// The target of a kind (one instance each, for the life of the process).
const Target& target_for(TargetKind kind);

} // namespace vtc
