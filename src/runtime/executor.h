// Runs a Program on the host: has its target compile and load the program's translation
// unit (through the target's cache), lays out the intermediate arena from the memory plan, and on
// each run fills the table of buffer addresses (bound inputs and outputs, constants, arena
// offsets) and calls the steps in order, timing each one. Fallback steps run their node on
// the reference interpreter, reading and writing the same physical buffers.
//
// Binding is by position: inputs[i] is the memory of program.inputs[i], outputs[j] the
// memory of program.outputs[j]. An output the program aliases to a donated input lives in
// that input's buffer; the caller passes the memory it wants the result in as the input
// (Session copies the input there first when the two differ).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "codegen/translation_unit.h"
#include "jit/host_compiler.h"
#include "kernels/cpu/constant_packs.h"
#include "lower/program.h"
#include "runtime/memory_plan.h"
#include "target/target.h"

namespace vtc {

class Executor {
public:
  // `program` must outlive the Executor; `unit` is its translation unit on `target` (one
  // entry per step). `threads` > 0 sets the kernels' thread count. Throws vtc::Error when the
  // program is inconsistent (naming the buffer or step), when compilation fails, or when an
  // entry point is missing from the compiled object.
  Executor(const Program& program, const TranslationUnit& unit, const Target& target,
           const jit::CompileOptions& compile, int threads);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs);

  const MemoryPlan& plan() const { return plan_; }
  // Seconds per step of the last run.
  const std::vector<double>& step_times() const { return step_times_; }
  // The compiled object, when the program has generated steps.
  const jit::CompiledObject* compiled() const { return loaded_ ? &loaded_->object() : nullptr; }
  // Per output position: the input position whose buffer it is aliased to, or -1.
  const std::vector<int>& output_alias() const { return output_alias_; }
  // Per input position: whether a step writes the input's buffer (directly or through an
  // aliased output).
  const std::vector<bool>& input_written() const { return input_written_; }

private:
  struct Fallback; // a step run by the reference interpreter
  void check_program(const TranslationUnit& unit) const;
  std::unique_ptr<Fallback> make_fallback(int step,
                                          const std::map<const Value*, int>& buffer_of) const;
  void run_fallback(const Fallback& f);

  const Program& program_;
  int threads_ = 0;
  MemoryPlan plan_;
  std::unique_ptr<LoadedUnit> loaded_;               // null when no step has generated code
  std::vector<bool> generated_;                      // per step: launched from loaded_
  std::vector<std::unique_ptr<Fallback>> fallbacks_; // per step; null for generated steps
  std::byte* arena_ = nullptr;
  std::vector<void*> pointers_; // per buffer: its address during a run
  std::vector<int> output_alias_;
  std::vector<bool> input_written_;
  std::vector<double> step_times_;
  kernels::ConstantPacks packs_;
};

} // namespace vtc
