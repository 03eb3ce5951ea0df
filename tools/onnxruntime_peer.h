// onnxruntime as the peer of `vtc bench` and the independent reference of `vtc check`: the
// inputs are written as .npy files to a temporary directory, tools/onnxruntime_peer.py runs
// the model there with the same thread count, and its outputs and median time are read back.
// Where python3 or onnxruntime is missing, the result says so and the tools print "n/a".
// OpenVINO runs through the same script (--engine openvino).
#pragma once

#include <string>

#include "ref/interpreter.h"

namespace vtc::cli {

struct PeerRun {
  bool available = false;
  std::string reason;   // why not available
  std::string how;      // "onnxruntime 1.x CPU, 2 threads"
  double median_ms = 0; // over `repeat` runs after `warmup`
  TensorMap outputs;    // by name, in the dtype onnxruntime produced (f32 for bf16 models)
};

PeerRun run_onnxruntime(const std::string& model, const TensorMap& inputs, int threads, int warmup,
                        int repeat, const std::string& python);
// The same on OpenVINO (CPU, f32 precision) where it is installed: the second CPU peer of
// `vtc bench`; bf16 models are not run.
PeerRun run_openvino(const std::string& model, const TensorMap& inputs, int threads, int warmup,
                     int repeat, const std::string& python);

// `t` converted to `dtype` (through double), to compare outputs of different float types.
Tensor converted(const Tensor& t, DType dtype);

} // namespace vtc::cli
