// The onnxruntime peer through a python3 subprocess (see onnxruntime_peer.h).
#include "onnxruntime_peer.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "frontend/tensor_io.h"
#include "jit/process.h"
#include "vtc/error.h"

namespace vtc::cli {

namespace {

// A fresh directory removed when the run is over.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("vtc-onnxruntime-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// The model on `engine` (onnxruntime or openvino) through tools/onnxruntime_peer.py.
PeerRun run_engine(const std::string& engine, const std::string& model, const TensorMap& inputs,
                   int threads, int warmup, int repeat, const std::string& python) {
  PeerRun run;
  TempDir dir;
  nlohmann::json manifest = nlohmann::json::object();
  int k = 0;
  for (const auto& [name, t] : inputs) {
    std::string file = "input_" + std::to_string(k++) + ".npy";
    write_npy((dir.path / file).string(), t);
    manifest[name] = file;
  }
  std::ofstream((dir.path / "manifest.json").string()) << manifest.dump();

  std::string script = std::string(VTC_SOURCE_DIR) + "/tools/onnxruntime_peer.py";
  jit::ProcessResult p = jit::run_process(
      {python, script, "--model", std::filesystem::absolute(model).string(), "--dir",
       dir.path.string(), "--threads", std::to_string(threads), "--warmup", std::to_string(warmup),
       "--repeat", std::to_string(repeat), "--engine", engine});
  std::ifstream in((dir.path / "result.json").string());
  if (!p.ok() || !in) {
    run.reason = python + " " + script + ": " + p.describe_status();
    if (!p.output.empty())
      run.reason += ": " + p.output.substr(p.output.size() > 2000 ? p.output.size() - 2000 : 0);
    return run;
  }
  nlohmann::json result = nlohmann::json::parse(in);
  if (result.at("status") != "ok") {
    run.reason = engine + " not available (" + result.value("reason", std::string()) + ")";
    return run;
  }
  run.available = true;
  run.how = result.at("how").get<std::string>();
  run.median_ms = result.at("median_ms").get<double>();
  for (const auto& [name, file] : result.at("outputs").items())
    run.outputs.emplace(name, read_npy((dir.path / file.get<std::string>()).string()));
  return run;
}

} // namespace

PeerRun run_onnxruntime(const std::string& model, const TensorMap& inputs, int threads, int warmup,
                        int repeat, const std::string& python) {
  return run_engine("onnxruntime", model, inputs, threads, warmup, repeat, python);
}

PeerRun run_openvino(const std::string& model, const TensorMap& inputs, int threads, int warmup,
                     int repeat, const std::string& python) {
  return run_engine("openvino", model, inputs, threads, warmup, repeat, python);
}

Tensor converted(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out(dtype, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (is_float(dtype))
      out.set_f64(i, t.get_f64(i));
    else
      out.set_i64(i, t.get_i64(i));
  }
  return out;
}

} // namespace vtc::cli
