// Device execution of a Program (see device_executor.h).
#include "runtime/device_executor.h"

#include <cstring>
#include <map>

#include "device/cuda_device.h"
#include "device/cuda_driver.h"
#include "device/cuda_objects.h"
#include "vtc/error.h"

namespace vtc {

namespace {

// A run of consecutive steps: generated ones replayed as one graph, or one interpreter step,
// or one generated step launched anew each run (`direct`: a library call reading, from the
// host's table, a buffer the caller binds, whose address a graph would keep).
struct Segment {
  size_t first = 0, end = 0;
  bool generated = false;
  bool direct = false;
  device::CudaGraph graph;
  device::CudaGraph timed_graph; // with an event recorded before each step (step timing)
};

CUdeviceptr address_of(const void* p) {
  return CUdeviceptr(reinterpret_cast<uintptr_t>(p));
}

} // namespace

struct DeviceExecutor::State {
  // The device first: every member after it is made in its context.
  const device::DeviceInfo* device = &device::cuda_device();
  device::CudaStream stream;
  device::DeviceBuffer arena;
  device::DeviceBuffer empty; // the address of every empty buffer
  // The index-check record (kernels/common/index_check.h): in device memory for the kernels
  // that test it, and in mapped host memory for the host to read after the run.
  device::DeviceBuffer status;
  device::MappedHostBuffer host_status;
  std::map<int, device::DeviceBuffer> constants, staging;
  std::vector<CUdeviceptr> table;          // per buffer: its device address during a run
  std::vector<CUdeviceptr> uploaded_table; // what the device table holds
  device::DeviceBuffer device_table;
  std::vector<Segment> segments;
  std::vector<device::CudaEvent> events; // step timing: one before each step and one at the end
  // Around the whole run on the stream: from before the first input is bound to after the
  // last output is copied out (what a caller timing the call with CUDA events sees).
  device::CudaEvent run_start, run_end;
};

DeviceExecutor::DeviceExecutor(const Program& program, const TranslationUnit& unit,
                               const Target& target, const jit::CompileOptions& compile)
    : ProgramRunner(program, unit, target, compile), state_(std::make_unique<State>()) {
  State& st = *state_;
  const size_t nbuf = program_.buffers.size();

  st.empty = device::DeviceBuffer(256);
  st.empty.zero();
  if (plan_.peak_bytes > 0) {
    st.arena = device::DeviceBuffer(size_t(plan_.peak_bytes));
    st.arena.zero();
  }
  st.table.assign(nbuf + 2, st.empty.ptr());
  if (checks_indices_) {
    st.status = device::DeviceBuffer(sizeof(kernels::IndexFailure));
    st.status.zero();
    st.host_status = device::MappedHostBuffer(sizeof(kernels::IndexFailure));
    st.table[size_t(program_.status_slot())] = st.status.ptr();
    st.table[size_t(program_.status_slot()) + 1] = st.host_status.device();
  }
  for (size_t id = 0; id < nbuf; ++id) {
    const BufferInfo& b = program_.buffers[id];
    const size_t bytes = b.type.nbytes();
    if (bytes == 0) continue;
    if (b.role == BufferRole::constant) {
      device::DeviceBuffer& d =
          st.constants.emplace(int(id), device::DeviceBuffer(bytes)).first->second;
      d.upload(b.value->constant->raw(), bytes);
      st.table[id] = d.ptr();
    } else if (b.role == BufferRole::intermediate && plan_.sizes[id] > 0) {
      st.table[id] = st.arena.ptr() + CUdeviceptr(plan_.offsets[id]);
    } else if (b.role == BufferRole::input || (b.role == BufferRole::output && b.alias_of < 0)) {
      st.staging.emplace(int(id), device::DeviceBuffer(bytes));
    }
  }
  st.device_table = device::DeviceBuffer(st.table.size() * sizeof(CUdeviceptr));
  // What the unit derives from the constants (a library's weights in the layout it reads); a
  // program whose every step runs on the interpreter loads no unit.
  if (loaded_)
    loaded_->prepare_constants(reinterpret_cast<const uint64_t*>(st.table.data()), st.stream.get());
  st.stream.synchronize();

  auto bound = [&](int id) {
    const BufferRole r = program_.buffers[size_t(id)].role;
    return r == BufferRole::input || r == BufferRole::output;
  };
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    bool direct = false;
    if (generated_[s])
      for (int id : loaded_->host_read_buffers(s))
        direct |= bound(id);
    if (generated_[s] && !direct && !st.segments.empty() && st.segments.back().generated &&
        !st.segments.back().direct && st.segments.back().end == s) {
      st.segments.back().end = s + 1;
      continue;
    }
    Segment seg;
    seg.first = s;
    seg.end = s + 1;
    seg.generated = generated_[s];
    seg.direct = direct;
    st.segments.push_back(std::move(seg));
  }
}

DeviceExecutor::~DeviceExecutor() = default;

void DeviceExecutor::copy_memory(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  state_->device->make_current();
  const bool to_device = device::is_device_pointer(dst);
  const bool from_device = device::is_device_pointer(src);
  CUstream stream = state_->stream.get();
  if (!to_device && !from_device)
    std::memcpy(dst, src, bytes);
  else if (to_device && from_device)
    device::copy_on_device(address_of(dst), address_of(src), bytes, stream, "copying a tensor");
  else if (to_device)
    device::copy_to_device(address_of(dst), src, bytes, stream, "copying a tensor to the device");
  else
    device::copy_to_host(dst, address_of(src), bytes, stream, "copying a tensor to the host");
  state_->stream.synchronize();
}

void DeviceExecutor::run(const std::vector<void*>& inputs, const std::vector<void*>& outputs) {
  check_bindings(inputs, outputs);
  State& st = *state_;
  st.device->make_current();
  CUstream stream = st.stream.get();
  auto bytes_of = [&](int id) { return program_.buffers[size_t(id)].type.nbytes(); };
  st.run_start.record(stream);

  // Inputs: device memory bound as it is, host memory copied into its staging buffer.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int id = program_.inputs[i];
    if (bytes_of(id) == 0) {
      st.table[size_t(id)] = st.empty.ptr();
    } else if (device::is_device_pointer(inputs[i])) {
      st.table[size_t(id)] = address_of(inputs[i]);
    } else {
      device::DeviceBuffer& d = st.staging.at(id);
      d.upload_async(inputs[i], bytes_of(id), stream);
      st.table[size_t(id)] = d.ptr();
    }
  }
  // Outputs the program stores directly; the rest (aliased outputs, outputs that are inputs
  // or constants, a value listed twice) are copied out after the run.
  std::vector<bool> direct(outputs.size(), false), on_device(outputs.size(), false);
  std::vector<bool> seen(program_.buffers.size(), false);
  for (size_t j = 0; j < outputs.size(); ++j) {
    const int id = program_.outputs[j];
    const BufferInfo& b = program_.buffers[size_t(id)];
    on_device[j] = outputs[j] && device::is_device_pointer(outputs[j]);
    if (b.alias_of >= 0) {
      st.table[size_t(id)] = st.table[size_t(b.alias_of)];
    } else if (b.role == BufferRole::output && !seen[size_t(id)]) {
      direct[j] = true;
      if (bytes_of(id) == 0)
        st.table[size_t(id)] = st.empty.ptr();
      else
        st.table[size_t(id)] = on_device[j] ? address_of(outputs[j]) : st.staging.at(id).ptr();
    }
    seen[size_t(id)] = true;
  }
  if (st.table != st.uploaded_table) {
    st.device_table.upload_async(st.table.data(), st.table.size() * sizeof(CUdeviceptr), stream);
    st.uploaded_table = st.table;
  }

  static_assert(sizeof(CUdeviceptr) == sizeof(uint64_t));
  const LaunchArgs args{reinterpret_cast<void* const*>(st.device_table.ptr()), nullptr, stream,
                        reinterpret_cast<const uint64_t*>(st.table.data())};
  if (step_timing_ && st.events.size() != program_.steps.size() + 1) {
    st.events.clear();
    for (size_t s = 0; s <= program_.steps.size(); ++s)
      st.events.emplace_back(true);
  }
  for (Segment& seg : st.segments) {
    if (!seg.generated) {
      // On the host, over copies of the step's buffers.
      st.stream.synchronize();
      stop_if_check_failed();
      if (step_timing_) st.events[seg.first].record(stream);
      interpreted_[seg.first]->run(
          [&](int id, void* dst) {
            device::copy_to_host(dst, st.table[size_t(id)], bytes_of(id), stream,
                                 "copying '" + program_.buffers[size_t(id)].name + "' to the host");
            st.stream.synchronize();
          },
          [&](int id, const void* src) {
            device::copy_to_device(st.table[size_t(id)], src, bytes_of(id), stream,
                                   "copying '" + program_.buffers[size_t(id)].name +
                                       "' to the device");
            st.stream.synchronize();
          });
      continue;
    }
    if (seg.direct) {
      for (size_t s = seg.first; s < seg.end; ++s) {
        if (step_timing_) st.events[s].record(stream);
        loaded_->launch(s, args);
      }
      continue;
    }
    if (step_timing_) {
      // The steps replayed as one graph with an event before each: launched one by one, a
      // library call's host work (a cuDNN plan's) would fall between its events.
      if (!seg.timed_graph.instantiated()) {
        seg.timed_graph.begin_capture(stream);
        for (size_t s = seg.first; s < seg.end; ++s) {
          st.events[s].record_in_capture(stream);
          loaded_->launch(s, args);
        }
        seg.timed_graph.end_capture();
      }
      seg.timed_graph.launch(stream);
      continue;
    }
    if (!seg.graph.instantiated()) {
      seg.graph.begin_capture(stream);
      for (size_t s = seg.first; s < seg.end; ++s)
        loaded_->launch(s, args);
      seg.graph.end_capture();
    }
    seg.graph.launch(stream);
  }
  if (step_timing_) st.events.back().record(stream);
  if (checks_indices_) {
    // Nothing is copied out of a run whose check failed.
    st.stream.synchronize();
    stop_if_check_failed();
  }

  for (size_t j = 0; j < outputs.size(); ++j) {
    const int id = program_.outputs[j];
    const size_t bytes = bytes_of(id);
    if (bytes == 0 || !outputs[j]) continue;
    const CUdeviceptr from = st.table[size_t(id)];
    if (on_device[j]) {
      if (from != address_of(outputs[j]))
        device::copy_on_device(address_of(outputs[j]), from, bytes, stream,
                               "copying output '" + program_.buffers[size_t(id)].name + "'");
    } else {
      device::copy_to_host(outputs[j], from, bytes, stream,
                           "copying output '" + program_.buffers[size_t(id)].name +
                               "' to the host");
    }
  }
  st.run_end.record(stream);
  st.stream.synchronize();
  run_device_ms_ = double(device::elapsed_ms(st.run_start, st.run_end));
  if (step_timing_)
    for (size_t s = 0; s < program_.steps.size(); ++s)
      step_times_[s] = double(device::elapsed_ms(st.events[s], st.events[s + 1])) * 1e-3;
}

void DeviceExecutor::stop_if_check_failed() {
  State& st = *state_;
  if (!checks_indices_) return;
  auto* record = static_cast<kernels::IndexFailure*>(st.host_status.host());
  if (!record->failed) return;
  const kernels::IndexFailure failure = *record;
  *record = {};
  st.status.zero();
  fail_index_check(failure);
}

} // namespace vtc
