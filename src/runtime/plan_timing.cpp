// See plan_timing.h.
#include "runtime/plan_timing.h"

#include <algorithm>
#include <deque>

#include "device/cuda_objects.h"
#include "vtc/error.h"

namespace vtc {

double median_device_ms(ProgramRunner& runner, const Program& program, const PlanTiming& t) {
  VTC_CHECK(t.runs >= 1) << "a plan is timed over at least one run";
  std::deque<device::DeviceBuffer> memory;
  auto bind = [&](int buffer) {
    const size_t bytes = std::max<size_t>(program.buffers[size_t(buffer)].type.nbytes(), 1);
    device::DeviceBuffer& d = memory.emplace_back(bytes);
    d.zero();
    return reinterpret_cast<void*>(uintptr_t(d.ptr()));
  };
  std::vector<void*> inputs, outputs;
  for (int id : program.inputs)
    inputs.push_back(bind(id));
  for (size_t j = 0; j < program.outputs.size(); ++j) {
    const int alias = runner.output_alias()[j];
    outputs.push_back(alias >= 0 ? inputs[size_t(alias)] : bind(program.outputs[j]));
  }
  for (int i = 0; i < t.warmup; ++i)
    runner.run(inputs, outputs);
  std::vector<double> ms;
  for (int i = 0; i < t.runs; ++i) {
    runner.run(inputs, outputs);
    ms.push_back(runner.run_device_ms());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

} // namespace vtc
