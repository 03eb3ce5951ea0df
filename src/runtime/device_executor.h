// Runs a Program in device memory (the cuda target). At construction: the translation unit
// compiled and loaded, one device arena laid out by the memory plan (peak reported by
// plan()), every constant uploaded once, a staging buffer per graph input and output for
// callers whose tensors are in host memory, and the device table of buffer addresses the
// kernels read. A run binds each input and output — a device pointer (a TensorView of device
// memory, e.g. a PyTorch CUDA tensor) directly, host memory through its staging buffer —
// rewrites the table where bindings changed, and replays the program: each maximal sequence
// of generated steps captured once into a CUDA graph and launched as one, interpreter steps
// on the host between them over copies of their buffers. A donated input bound in device
// memory is updated in place there. With step timing on, each sequence replays as a second
// graph with a CUDA event recorded before every step, and step_times() holds each step's
// device time (what the steps take as they run, without the host's launch work between
// them). A failed index check
// makes the later kernels return at once; the run then throws its error, before any output
// is copied out.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "runtime/program_runner.h"

namespace vtc {

class DeviceExecutor final : public ProgramRunner {
public:
  // Throws vtc::Error without a usable GPU (no driver, no device, a driver older than the
  // toolkit), when NVRTC fails, or when the program is inconsistent.
  DeviceExecutor(const Program& program, const TranslationUnit& unit, const Target& target,
                 const jit::CompileOptions& compile);
  ~DeviceExecutor() override;

  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs) override;
  void copy_memory(void* dst, const void* src, size_t bytes) const override;

  // Time every step with CUDA events recorded inside the replayed graphs.
  void set_step_timing(bool on) { step_timing_ = on; }

private:
  // Throws the failed check's error (resetting the record) when the run's record has one.
  void stop_if_check_failed();

  struct State; // device objects (cuda_objects.h), kept out of this header
  std::unique_ptr<State> state_;
  bool step_timing_ = false;
};

} // namespace vtc
