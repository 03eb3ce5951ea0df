// onnxruntime as the peer of `vtc bench` and the independent reference of `vtc check`: the
// inputs are written as .npy files to a temporary directory, tools/onnxruntime_peer.py loads
// the model there with the same thread count and takes blocks of timed runs when asked (so
// that `vtc bench --interleave` takes turns with it), and its outputs and times are read back.
// Where python3 or onnxruntime is missing, the result says so and the tools print "n/a".
// OpenVINO runs through the same script (--engine openvino).
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ref/interpreter.h"

namespace vtc::jit {
class LineProcess;
}

namespace vtc::cli {

struct PeerRun {
  bool available = false;
  std::string reason;   // why not available
  std::string how;      // "onnxruntime 1.x CPU, 2 threads"
  double median_ms = 0; // over the timed runs, after the warm-up
  int blocks = 0;       // the blocks the timed runs were taken in
  TensorMap outputs;    // by name, in the dtype onnxruntime produced (f32 for bf16 models)
};

// A peer engine ("onnxruntime" or "openvino") kept running on a model: loaded and warmed up
// (`warmup` untimed runs) at construction, then timed in blocks (time()) until finish().
class PeerSession {
public:
  PeerSession(const std::string& engine, const std::string& model, const TensorMap& inputs,
              int threads, int warmup, const std::string& python);
  ~PeerSession();
  PeerSession(const PeerSession&) = delete;
  PeerSession& operator=(const PeerSession&) = delete;

  // False once the peer is missing or has failed (finish() then says why).
  bool available() const { return run_.available; }
  // `runs` more untimed runs (nothing where the peer is not available).
  void warm_up(int runs);
  // Waits (at most `limit_ms`) until the peer's threads have stopped running: onnxruntime's
  // spin about 50 ms after a run, on a core the next system's runs would otherwise share.
  void wait_until_idle(double limit_ms = 250);
  // `runs` more timed runs (nothing where the peer is not available).
  void time(int runs);
  // The median over every timed run and the outputs of the last run; the peer exits.
  PeerRun finish();

private:
  void fail(const std::string& what);
  // Sends `command` and returns the answer's `key`, null after a failure (then recorded).
  nlohmann::json ask(const std::string& command, const std::string& key);

  std::filesystem::path dir_;
  std::unique_ptr<jit::LineProcess> process_;
  std::vector<double> times_;
  PeerRun run_;
};

// One peer run: `warmup` untimed runs, then `repeat` timed ones.
PeerRun run_onnxruntime(const std::string& model, const TensorMap& inputs, int threads, int warmup,
                        int repeat, const std::string& python);
// The same on OpenVINO (CPU, f32 precision) where it is installed: the second CPU peer of
// `vtc bench`; bf16 models are not run.
PeerRun run_openvino(const std::string& model, const TensorMap& inputs, int threads, int warmup,
                     int repeat, const std::string& python);

// `t` converted to `dtype` (through double), to compare outputs of different float types.
Tensor converted(const Tensor& t, DType dtype);

} // namespace vtc::cli
