// See plan_timing.h.
#include "runtime/plan_timing.h"

#include <algorithm>
#include <deque>

#include "device/cuda_objects.h"
#include "runtime/device_executor.h"
#include "vtc/error.h"

namespace vtc {

namespace {

double median_of(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Every input and output of `program` in zeroed device memory, a donated input's output in
// its buffer.
struct DeviceBindings {
  std::deque<device::DeviceBuffer> memory;
  std::vector<void*> inputs, outputs;

  DeviceBindings(const ProgramRunner& runner, const Program& program) {
    auto bind = [&](int buffer) {
      const size_t bytes = std::max<size_t>(program.buffers[size_t(buffer)].type.nbytes(), 1);
      device::DeviceBuffer& d = memory.emplace_back(bytes);
      d.zero();
      return reinterpret_cast<void*>(uintptr_t(d.ptr()));
    };
    for (int id : program.inputs)
      inputs.push_back(bind(id));
    for (size_t j = 0; j < program.outputs.size(); ++j) {
      const int alias = runner.output_alias()[j];
      outputs.push_back(alias >= 0 ? inputs[size_t(alias)] : bind(program.outputs[j]));
    }
  }
};

} // namespace

PlanTimes time_plan(ProgramRunner& runner, const Program& program, const PlanTiming& t) {
  VTC_CHECK(t.runs >= 1) << "a plan is timed over at least one run";
  DeviceBindings b(runner, program);
  for (int i = 0; i < t.warmup; ++i)
    runner.run(b.inputs, b.outputs);
  std::vector<double> ms;
  for (int i = 0; i < t.runs; ++i) {
    runner.run(b.inputs, b.outputs);
    ms.push_back(runner.run_device_ms());
  }
  PlanTimes times;
  times.ms = median_of(ms);
  if (t.step_runs <= 0) return times;
  auto* device = dynamic_cast<DeviceExecutor*>(&runner);
  VTC_CHECK(device) << "steps are timed on a device runner only";
  device->set_step_timing(true);
  std::vector<std::vector<double>> steps(program.steps.size());
  runner.run(b.inputs, b.outputs); // the step-timed graphs' capture
  for (int i = 0; i < t.step_runs; ++i) {
    runner.run(b.inputs, b.outputs);
    for (size_t k = 0; k < steps.size(); ++k)
      steps[k].push_back(runner.step_times()[k] * 1e3);
  }
  device->set_step_timing(false);
  for (auto& s : steps)
    times.step_ms.push_back(median_of(std::move(s)));
  return times;
}

double median_device_ms(ProgramRunner& runner, const Program& program, const PlanTiming& t) {
  PlanTiming whole = t;
  whole.step_runs = 0;
  return time_plan(runner, program, whole).ms;
}

} // namespace vtc
