// Runs a Program in host memory (the cpu target): has its target compile and load the
// program's translation unit (through the target's cache), lays out the intermediate arena
// from the memory plan, and on each run fills the table of buffer addresses (bound inputs and
// outputs, constants, arena offsets) and calls the steps in order, timing each one.
// Interpreter steps run their nodes on the reference interpreter, reading and writing the
// same physical buffers. Binding rules: program_runner.h. Under the sanitizers each
// intermediate has a block of its own instead of a place in the arena (host_buffers.h).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <vector>

#include "kernels/cpu/constant_packs.h"
#include "runtime/host_buffers.h"
#include "runtime/program_runner.h"
#include "runtime/step_threads.h"

namespace vtc {

class Executor final : public ProgramRunner {
public:
  // `program` must outlive the Executor; `unit` is its translation unit on `target` (one
  // entry per step). `threads` > 0 sets the kernels' thread count. Throws vtc::Error when the
  // program is inconsistent (naming the buffer or step), when compilation fails, or when an
  // entry point is missing from the compiled object.
  Executor(const Program& program, const TranslationUnit& unit, const Target& target,
           const jit::CompileOptions& compile, int threads);
  ~Executor() override;

  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs) override;

private:
  int threads_ = 0;
  StepPlan step_plan_; // per step: threads_, or 1 (step_threads.h)
  HostBuffers buffers_;
  std::vector<void*> pointers_;    // per buffer: its address during a run; then the status slots
  kernels::IndexFailure status_{}; // the run's index-check record
  kernels::ConstantPacks packs_;
};

} // namespace vtc
