// Host execution of a Program (see executor.h).
#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "runtime/step_threads.h"
#include "target/cpu_task_pool.h"
#include "vtc/error.h"

namespace vtc {

Executor::Executor(const Program& program, const TranslationUnit& unit, const Target& target,
                   const jit::CompileOptions& compile, int threads)
    : ProgramRunner(program, unit, target, compile), threads_(threads),
      step_plan_(program_, threads, CpuTaskPool::instance().recent_round_trip_seconds()),
      buffers_(program_, plan_, compile.sanitize) {
  size_t nbuf = program_.buffers.size();
  pointers_.assign(nbuf + 2, buffers_.empty());
  pointers_[size_t(program_.status_slot())] = &status_;
  pointers_[size_t(program_.status_slot()) + 1] = &status_;
  for (size_t id = 0; id < nbuf; ++id) {
    const BufferInfo& b = program_.buffers[id];
    if (b.role == BufferRole::constant && b.type.nbytes() > 0)
      pointers_[id] = const_cast<std::byte*>(b.value->constant->raw());
    if (b.role == BufferRole::intermediate) pointers_[id] = buffers_.intermediate(int(id));
  }
}

Executor::~Executor() = default;

void Executor::run(const std::vector<void*>& inputs, const std::vector<void*>& outputs) {
  check_bindings(inputs, outputs);
#ifdef _OPENMP
  if (threads_ > 0) omp_set_num_threads(threads_);
#endif
  for (size_t i = 0; i < inputs.size(); ++i) {
    pointers_[size_t(program_.inputs[i])] = inputs[i] ? inputs[i] : buffers_.empty();
  }
  // Outputs the program stores directly; the rest (aliased outputs, outputs that are inputs
  // or constants, a value listed twice) are copied out after the run when needed.
  std::vector<bool> direct(outputs.size(), false);
  std::vector<bool> seen(program_.buffers.size(), false);
  for (size_t j = 0; j < outputs.size(); ++j) {
    int id = program_.outputs[j];
    const BufferInfo& b = program_.buffers[size_t(id)];
    if (b.alias_of >= 0) {
      pointers_[size_t(id)] = pointers_[size_t(b.alias_of)];
    } else if (b.role == BufferRole::output && !seen[size_t(id)]) {
      pointers_[size_t(id)] = b.type.nbytes() ? outputs[j] : buffers_.empty();
      direct[j] = true;
    }
    seen[size_t(id)] = true;
  }

  // The cores' round trip measured again now and then: a virtual machine's cores move between
  // near and far apart, and a measurement taken while another process held a core reads long.
  // The plan follows the recent round trip, whichever program's run measured it.
  if (threads_ != 1) {
    CpuTaskPool& pool = CpuTaskPool::instance();
    pool.remeasure_round_trip(kRemeasureInterval);
    step_plan_.follow(program_, threads_, pool.recent_round_trip_seconds());
  }
  using clock = std::chrono::steady_clock;
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    CpuTaskPool::set_threads(step_plan_.threads[s]);
    auto start = clock::now();
    if (generated_[s])
      loaded_->launch(s, LaunchArgs{pointers_.data(), &packs_, nullptr});
    else
      interpreted_[s]->run(
          [&](int id, void* dst) {
            std::memcpy(dst, pointers_[size_t(id)], program_.buffers[size_t(id)].type.nbytes());
          },
          [&](int id, const void* src) {
            std::memcpy(pointers_[size_t(id)], src, program_.buffers[size_t(id)].type.nbytes());
          });
    step_times_[s] = std::chrono::duration<double>(clock::now() - start).count();
    if (status_.failed) {
      const kernels::IndexFailure failure = status_;
      status_ = {};
      fail_index_check(failure);
    }
  }
  CpuTaskPool::set_threads(threads_);

  for (size_t j = 0; j < outputs.size(); ++j) {
    if (direct[j]) continue;
    const BufferInfo& b = program_.buffers[size_t(program_.outputs[j])];
    void* from = pointers_[size_t(program_.outputs[j])];
    if (outputs[j] && from != outputs[j] && b.type.nbytes() > 0)
      std::memcpy(outputs[j], from, b.type.nbytes());
  }
}

} // namespace vtc
