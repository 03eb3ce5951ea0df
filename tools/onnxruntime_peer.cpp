// The onnxruntime and OpenVINO peers through a python3 process each (see onnxruntime_peer.h).
#include "onnxruntime_peer.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <unistd.h>

#include "frontend/tensor_io.h"
#include "jit/line_process.h"
#include "vtc/error.h"

namespace vtc::cli {

namespace {

// A fresh directory for one peer's inputs and outputs.
std::filesystem::path fresh_directory() {
  static int counter = 0;
  std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("vtc-onnxruntime-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The last lines of a text file (the peer's stderr), for error messages.
std::string tail_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.substr(text.size() > 2000 ? text.size() - 2000 : 0);
}

// The CPU time the threads of process `pid` have run, in ms (Linux's per-thread schedstat); 0
// where it cannot be read.
double cpu_ms_of(pid_t pid) {
  double ns = 0;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    double run_ns = 0;
    if (in >> run_ns) ns += run_ns;
  }
  return ns / 1e6;
}

PeerRun run_engine(const std::string& engine, const std::string& model, const TensorMap& inputs,
                   int threads, int warmup, int repeat, const std::string& python) {
  PeerSession peer(engine, model, inputs, threads, warmup, python);
  peer.time(repeat);
  return peer.finish();
}

} // namespace

PeerSession::PeerSession(const std::string& engine, const std::string& model,
                         const TensorMap& inputs, int threads, int warmup,
                         const std::string& python)
    : dir_(fresh_directory()) {
  nlohmann::json manifest = nlohmann::json::object();
  int k = 0;
  for (const auto& [name, t] : inputs) {
    std::string file = "input_" + std::to_string(k++) + ".npy";
    write_npy((dir_ / file).string(), t);
    manifest[name] = file;
  }
  std::ofstream((dir_ / "manifest.json").string()) << manifest.dump();

  const std::string script = std::string(VTC_SOURCE_DIR) + "/tools/onnxruntime_peer.py";
  process_ = std::make_unique<jit::LineProcess>(
      std::vector<std::string>{python, script, "--model", std::filesystem::absolute(model).string(),
                               "--dir", dir_.string(), "--threads", std::to_string(threads),
                               "--warmup", std::to_string(warmup), "--engine", engine},
      (dir_ / "stderr.txt").string());
  run_.reason = python + " " + script;
  const std::optional<std::string> line = process_->receive();
  if (!line) {
    fail("ended before it was ready");
    return;
  }
  const nlohmann::json ready = nlohmann::json::parse(*line, nullptr, false);
  if (ready.is_discarded() || !ready.contains("status")) {
    fail("answered '" + *line + "'");
    return;
  }
  if (ready.at("status") != "ready") {
    run_.reason = engine + " not available (" + ready.value("reason", std::string()) + ")";
    return;
  }
  run_.available = true;
  run_.how = ready.value("how", engine);
}

PeerSession::~PeerSession() {
  process_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void PeerSession::fail(const std::string& what) {
  run_.available = false;
  const jit::ProcessResult status = process_->finish();
  run_.reason += ": " + what + " (" + status.describe_status() + ")";
  const std::string err = tail_of(dir_ / "stderr.txt");
  if (!err.empty()) run_.reason += ": " + err;
}

nlohmann::json PeerSession::ask(const std::string& command, const std::string& key) {
  if (!process_->send(command)) {
    fail("stopped reading");
    return nullptr;
  }
  const std::optional<std::string> line = process_->receive();
  if (!line) {
    fail("ended after '" + command + "'");
    return nullptr;
  }
  nlohmann::json answer = nlohmann::json::parse(*line, nullptr, false);
  if (answer.is_discarded() || !answer.contains(key)) {
    fail("answered '" + *line + "' to '" + command + "'");
    return nullptr;
  }
  return answer.at(key);
}

void PeerSession::wait_until_idle(double limit_ms) {
  if (!run_.available) return;
  // Idle: under a tenth of a core in each of kIdleWindows windows of 5 ms in a row (a pool's
  // threads that spin, sleep and spin again passed one quiet window and then took a core from
  // the next system's runs).
  constexpr auto kWindow = std::chrono::milliseconds(5);
  constexpr int kIdleWindows = 4;
  const auto start = std::chrono::steady_clock::now();
  double before = cpu_ms_of(process_->pid());
  int quiet = 0;
  while (
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() <
      limit_ms) {
    std::this_thread::sleep_for(kWindow);
    const double now = cpu_ms_of(process_->pid());
    quiet = now - before < 0.5 ? quiet + 1 : 0;
    if (quiet == kIdleWindows) return;
    before = now;
  }
}

void PeerSession::warm_up(int runs) {
  if (run_.available && runs > 0) ask("warm " + std::to_string(runs), "warm");
}

void PeerSession::time(int runs) {
  if (!run_.available || runs <= 0) return;
  const nlohmann::json times = ask("time " + std::to_string(runs), "times_ms");
  for (const auto& t : times)
    times_.push_back(t.get<double>());
  if (!times.is_null()) ++run_.blocks;
}

PeerRun PeerSession::finish() {
  if (!run_.available) return run_;
  const nlohmann::json outputs = ask("finish", "outputs");
  if (outputs.is_null()) return run_;
  for (const auto& [name, file] : outputs.items())
    run_.outputs.emplace(name, read_npy((dir_ / file.get<std::string>()).string()));
  if (!times_.empty()) run_.median_ms = median(times_);
  process_->finish();
  return run_;
}

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
