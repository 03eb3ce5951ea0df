// What every executor shares (see program_runner.h), and the choice of executor.
#include "runtime/program_runner.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "lower/index_checks.h"
#include "runtime/device_executor.h"
#include "runtime/executor.h"
#include "vtc/error.h"

namespace vtc {

ProgramRunner::ProgramRunner(const Program& program, const TranslationUnit& unit,
                             const Target& target, const jit::CompileOptions& compile)
    : program_(program) {
  check_program(unit);
  plan_ = plan_memory(program_);
  generated_.assign(program_.steps.size(), false);
  for (size_t s = 0; s < program_.steps.size(); ++s)
    generated_[s] = !unit.entries[s].empty();
  if (std::find(generated_.begin(), generated_.end(), true) != generated_.end())
    loaded_ = target.load(unit, compile);
  std::map<const Value*, int> buffer_of;
  for (size_t id = 0; id < program_.buffers.size(); ++id)
    if (program_.buffers[id].value) buffer_of.emplace(program_.buffers[id].value, int(id));
  interpreted_.resize(program_.steps.size());
  for (size_t s = 0; s < program_.steps.size(); ++s)
    if (!generated_[s])
      interpreted_[s] = std::make_unique<InterpreterStep>(program_, int(s), buffer_of);

  std::map<int, int> input_position;
  for (size_t i = 0; i < program_.inputs.size(); ++i)
    input_position[program_.inputs[i]] = int(i);
  output_alias_.assign(program_.outputs.size(), -1);
  for (size_t j = 0; j < program_.outputs.size(); ++j) {
    int alias = program_.buffers[size_t(program_.outputs[j])].alias_of;
    if (alias >= 0) output_alias_[j] = input_position.at(alias);
  }
  input_written_.assign(program_.inputs.size(), false);
  for (const StepInfo& s : program_.steps)
    for (int id : s.writes) {
      const BufferInfo& b = program_.buffers[size_t(id)];
      if (b.role == BufferRole::input) input_written_[size_t(input_position.at(id))] = true;
      if (b.alias_of >= 0) input_written_[size_t(input_position.at(b.alias_of))] = true;
    }
  step_times_.assign(program_.steps.size(), 0.0);
  for (const StepInfo& s : program_.steps)
    checks_indices_ |= s.kind == StepKind::index_check;
}

void ProgramRunner::fail_index_check(const kernels::IndexFailure& failure) const {
  const size_t s = size_t(failure.step);
  VTC_CHECK(s < program_.steps.size() && program_.steps[s].check)
      << "a run-time index check failed in step " << failure.step << ", which checks nothing";
  VTC_FAIL() << index_check_error(*program_.steps[s].check, failure.value, failure.flat);
}

void ProgramRunner::copy_memory(void* dst, const void* src, size_t bytes) const {
  if (bytes) std::memcpy(dst, src, bytes);
}

void ProgramRunner::check_bindings(const std::vector<void*>& inputs,
                                   const std::vector<void*>& outputs) const {
  VTC_CHECK(inputs.size() == program_.inputs.size() && outputs.size() == program_.outputs.size())
      << "run with " << inputs.size() << " inputs and " << outputs.size()
      << " outputs; the program has " << program_.inputs.size() << " and "
      << program_.outputs.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const BufferInfo& b = program_.buffers[size_t(program_.inputs[i])];
    VTC_CHECK(inputs[i] || b.type.nbytes() == 0) << "input '" << b.name << "' has no data";
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    const BufferInfo& b = program_.buffers[size_t(program_.outputs[j])];
    VTC_CHECK(outputs[j] || b.type.nbytes() == 0) << "output '" << b.name << "' has no storage";
  }
}

void ProgramRunner::check_program(const TranslationUnit& unit) const {
  const Program& p = program_;
  int nbuf = int(p.buffers.size());
  auto valid = [&](int id) { return id >= 0 && id < nbuf; };
  for (int id : p.inputs) {
    VTC_CHECK(valid(id)) << "program input names buffer " << id << " of " << nbuf;
    VTC_CHECK(p.buffers[size_t(id)].role == BufferRole::input)
        << "program input '" << p.buffers[size_t(id)].name << "' is a "
        << buffer_role_name(p.buffers[size_t(id)].role) << " buffer";
  }
  for (int id : p.outputs)
    VTC_CHECK(valid(id)) << "program output names buffer " << id;
  for (int id = 0; id < nbuf; ++id) {
    const BufferInfo& b = p.buffers[size_t(id)];
    if (b.role == BufferRole::constant)
      VTC_CHECK(b.value && b.value->constant && b.value->constant->type() == b.type)
          << "constant buffer '" << b.name << "' (" << type_str(b.type)
          << ") has no constant tensor of its type";
    if (b.alias_of < 0) continue;
    VTC_CHECK(b.role == BufferRole::output && valid(b.alias_of) &&
              p.buffers[size_t(b.alias_of)].role == BufferRole::input)
        << "buffer '" << b.name << "' aliases buffer " << b.alias_of
        << ", but only an output may alias an input";
    const BufferInfo& in = p.buffers[size_t(b.alias_of)];
    VTC_CHECK(in.type.nbytes() == b.type.nbytes())
        << "output '" << b.name << "' (" << type_str(b.type) << ") aliases input '" << in.name
        << "' (" << type_str(in.type) << ") of another size";
    bool listed = false;
    for (int i : p.inputs)
      listed |= i == b.alias_of;
    VTC_CHECK(listed) << "output '" << b.name << "' aliases '" << in.name
                      << "', which is not a graph input of the program";
  }
  VTC_CHECK(unit.entries.size() == p.steps.size())
      << "the translation unit has " << unit.entries.size() << " entry points for "
      << p.steps.size() << " steps";
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const StepInfo& step = p.steps[s];
    VTC_CHECK(unit.entries[s].empty() != step.fallback.empty())
        << "step " << s << " '" << step.name
        << "' must have exactly one of a generated entry and a fallback node";
    for (int id : step.writes) {
      VTC_CHECK(valid(id)) << "step " << s << " '" << step.name << "' writes buffer " << id;
      VTC_CHECK(p.buffers[size_t(id)].role != BufferRole::constant)
          << "step " << s << " '" << step.name << "' writes constant '"
          << p.buffers[size_t(id)].name << "'";
    }
  }
}

std::unique_ptr<ProgramRunner> make_runner(const Program& program, const TranslationUnit& unit,
                                           const Target& target, const jit::CompileOptions& compile,
                                           const Options& options) {
  if (target.device_memory()) {
    auto runner = std::make_unique<DeviceExecutor>(program, unit, target, compile);
    runner->set_step_timing(options.time_steps);
    return runner;
  }
  return std::make_unique<Executor>(program, unit, target, compile, options.threads);
}

} // namespace vtc
