// What every executor of a lowered Program shares: the checks that the program is consistent
// with its translation unit, the memory plan, which outputs alias donated inputs and which
// inputs the program writes, and the per-step times of the last run. Executor runs a program
// in host memory (cpu), DeviceExecutor in device memory (cuda); make_runner picks by target.
//
// Binding is by position: inputs[i] is the memory of program.inputs[i], outputs[j] the
// memory of program.outputs[j]. An output the program aliases to a donated input lives in
// that input's buffer; the caller passes the memory it wants the result in as the input
// (Session copies the input there first when the two differ).
#pragma once

#include <memory>
#include <vector>

#include "codegen/translation_unit.h"
#include "jit/compile_options.h"
#include "jit/host_compiler.h"
#include "kernels/common/index_check.h"
#include "lower/program.h"
#include "runtime/interpreter_step.h"
#include "runtime/memory_plan.h"
#include "target/target.h"
#include "vtc/options.h"

namespace vtc {

class ProgramRunner {
public:
  virtual ~ProgramRunner() = default;
  ProgramRunner(const ProgramRunner&) = delete;
  ProgramRunner& operator=(const ProgramRunner&) = delete;

  // Runs the program once; returns when its outputs are written.
  virtual void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs) = 0;
  // Copies `bytes` bytes between memory a caller may bind (host memory; on a device runner
  // also device memory, either side).
  virtual void copy_memory(void* dst, const void* src, size_t bytes) const;

  const MemoryPlan& plan() const { return plan_; }
  // Seconds per step of the last run (where the runner times steps; zeros otherwise).
  const std::vector<double>& step_times() const { return step_times_; }
  // Milliseconds the last run took on the device, by CUDA events on its stream (inputs bound,
  // program replayed, outputs copied out); negative where the runner has no device.
  double run_device_ms() const { return run_device_ms_; }
  // The compiled object, when the program has generated steps.
  const jit::CompiledObject* compiled() const { return loaded_ ? &loaded_->object() : nullptr; }
  // Bytes the loaded unit holds besides the buffers (LoadedUnit::workspace_bytes), in all and
  // by what holds them.
  int64_t workspace_bytes() const { return loaded_ ? loaded_->workspace_bytes() : 0; }
  std::vector<std::pair<std::string, int64_t>> workspace_parts() const {
    return loaded_ ? loaded_->workspace_parts() : std::vector<std::pair<std::string, int64_t>>{};
  }
  // Per output position: the input position whose buffer it is aliased to, or -1.
  const std::vector<int>& output_alias() const { return output_alias_; }
  // Per input position: whether a step writes the input's buffer (directly or through an
  // aliased output).
  const std::vector<bool>& input_written() const { return input_written_; }

protected:
  // Checks `program` against `unit` (throws vtc::Error naming the buffer or step), plans its
  // memory, has `target` compile and load the unit when a step has generated code, and
  // prepares the interpreter steps.
  ProgramRunner(const Program& program, const TranslationUnit& unit, const Target& target,
                const jit::CompileOptions& compile);

  void check_program(const TranslationUnit& unit) const;
  // Throws the error of a failed index check (the reference interpreter's one line).
  [[noreturn]] void fail_index_check(const kernels::IndexFailure& failure) const;
  void check_bindings(const std::vector<void*>& inputs, const std::vector<void*>& outputs) const;

  const Program& program_;
  MemoryPlan plan_;
  std::unique_ptr<LoadedUnit> loaded_; // null when no step has generated code
  std::vector<bool> generated_;        // per step: launched from loaded_
  std::vector<std::unique_ptr<InterpreterStep>> interpreted_; // per step; null for generated
  std::vector<int> output_alias_;
  std::vector<bool> input_written_;
  std::vector<double> step_times_;
  double run_device_ms_ = -1;
  bool checks_indices_ = false; // a step checks run-time indices
};

// The runner of `program` on `target`: a DeviceExecutor where the target's buffers live in
// device memory, else an Executor; Options::threads and time_steps as they apply.
std::unique_ptr<ProgramRunner> make_runner(const Program& program, const TranslationUnit& unit,
                                           const Target& target, const jit::CompileOptions& compile,
                                           const Options& options);

} // namespace vtc
