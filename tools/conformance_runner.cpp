// One conformance case: import (freezing graph inputs that determine shapes), run, compare
// with the expected outputs under ONNX's backend-test tolerance (rtol 1e-3, atol 1e-7).
#include "conformance_runner.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <poll.h>
#include <regex>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

#include "frontend/onnx_import.h"
#include "frontend/tensor_io.h"
#include "ops/op_registry.h"
#include "passes/canonicalize.h"
#include "ref/compare.h"
#include "ref/interpreter.h"
#include "runtime/lowering.h"
#include "target/cuda_target.h"
#include "target/cuda_unit_compiler.h"
#include "vtc/error.h"
#include "vtc/vtc.h"

namespace vtc {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p.string());
  }
  return files;
}

// Imports the model, freezing each graph input whose value shape inference needs.
Graph import_freezing(const std::string& bytes, const std::string& dir,
                      const std::vector<std::string>& input_names,
                      const std::vector<std::string>& input_files) {
  ImportOptions options;
  for (int attempt = 0;; ++attempt) {
    try {
      return import_onnx_bytes(bytes, dir, dir + "/model.onnx", options);
    } catch (const NeedsConstantInput& e) {
      auto it = std::find(input_names.begin(), input_names.end(), e.value_name);
      bool freezable =
          it != input_names.end() && size_t(it - input_names.begin()) < input_files.size();
      if (!freezable || options.frozen_inputs.count(e.value_name) || attempt > 16)
        throw Unsupported(std::string(e.what()) + " (needs dynamic shapes)");
      options.frozen_inputs[e.value_name] =
          read_tensor_pb(input_files[size_t(it - input_names.begin())]);
    }
  }
}

// Fills r.op and r.data_movement from the model's node list.
void classify_case(const std::string& bytes, const std::string& dir, CaseResult& r) {
  std::vector<std::string> ops = onnx_node_op_types(bytes, dir);
  std::set<std::string> distinct(ops.begin(), ops.end());
  r.op = distinct.size() == 1 ? *distinct.begin() : "(" + std::to_string(ops.size()) + " ops)";
  r.data_movement = !ops.empty();
  for (const std::string& op : ops) {
    const OpDef* d = find_op(op);
    if (!d || d->kind != OpKind::data_movement) r.data_movement = false;
  }
}

// The case's model, imported with its inputs frozen and canonicalised, and its program for
// `options.target` under `strategy`.
struct LoweredCase {
  std::unique_ptr<Graph> graph;
  Program program;
  Options options;
};
LoweredCase lower_case(const std::string& bytes, const std::string& dir,
                       const std::vector<std::string>& names,
                       const std::vector<std::string>& in_files, const char* strategy,
                       const ConformanceOptions& options) {
  LoweredCase c;
  c.graph = std::make_unique<Graph>(import_freezing(bytes, dir, names, in_files));
  canonicalize(*c.graph);
  c.options.target = *parse_target_kind(options.target);
  c.options.strategy = *parse_strategy_kind(strategy);
  c.options.cache_dir = options.cache_dir;
  c.options.sanitize = options.sanitize;
  c.program = lower_for_target(*c.graph, c.options);
  return c;
}

// Runs the case on a compiled target (cpu, cuda) under every strategy; the outputs of all
// strategies must be bitwise identical (only loads and stores differ between them, never
// arithmetic).
TensorMap run_compiled(const std::string& bytes, const std::string& dir,
                       const std::vector<std::string>& names,
                       const std::vector<std::string>& in_files, const TensorMap& inputs,
                       const ConformanceOptions& options) {
  std::optional<TensorMap> first;
  std::string first_strategy;
  for (const char* strategy : {"none", "type1", "greedy"}) {
    LoweredCase c = lower_case(bytes, dir, names, in_files, strategy, options);
    if (options.compiled_only)
      for (const StepInfo& step : c.program.steps)
        VTC_CHECK(step.fallback.empty())
            << "strategy " << strategy << ": " << step.name << " runs on the reference interpreter";
    Session session(std::move(c.graph), std::move(c.program), c.options);
    HostTensorMap in;
    for (const TensorSpec& spec : session.inputs())
      in[spec.name] = inputs.at(spec.name);
    HostTensorMap out = session.run(in);
    TensorMap result(out.begin(), out.end());
    if (!first) {
      first = result;
      first_strategy = strategy;
      continue;
    }
    for (const auto& [name, t] : result)
      VTC_CHECK(t.bitwise_equal(first->at(name)))
          << "strategy " << strategy << " differs from " << first_strategy << " on output '" << name
          << "'";
  }
  return *first;
}

// Generates and compiles the case's cuda unit under every strategy with NVRTC, unoptimised
// (--Ofast-compile=max: every template instantiated and checked, little time in ptxas).
void compile_for_cuda(const std::string& bytes, const std::string& dir,
                      const std::vector<std::string>& names,
                      const std::vector<std::string>& in_files, const ConformanceOptions& options) {
  const Target& target = target_for(TargetKind::cuda);
  for (const char* strategy : {"none", "type1", "greedy"}) {
    LoweredCase c = lower_case(bytes, dir, names, in_files, strategy, options);
    TranslationUnit tu = generate_translation_unit(c.program, target.dialect());
    jit::NvrtcOptions nvrtc = cuda_nvrtc_options(target.compile_options(c.options), "sm_90a", 0);
    nvrtc.flags.push_back("--Ofast-compile=max");
    compile_cuda_unit(tu, nvrtc, 1);
  }
}

} // namespace

const char* status_name(CaseStatus s) {
  switch (s) {
  case CaseStatus::passed:
    return "passed";
  case CaseStatus::failed:
    return "failed";
  case CaseStatus::unsupported:
    return "unsupported";
  }
  return "?";
}

CaseResult run_conformance_case(const std::string& dir, const ConformanceOptions& options) {
  CaseResult r;
  r.name = fs::path(dir).filename().string();
  r.op = "?";
  try {
    VTC_CHECK(parse_target_kind(options.target))
        << "unknown target '" << options.target << "' (cpu, cuda, ref)";
    std::string bytes = read_model_bytes(dir + "/model.onnx");
    classify_case(bytes, dir, r);
    std::vector<std::string> names = onnx_graph_input_names(bytes, dir);
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    VTC_CHECK(!sets.empty()) << dir << ": no test_data_set_* folder";
    if (options.compile_only) {
      VTC_CHECK(options.target == "cuda") << "--compile-only is for target cuda";
      compile_for_cuda(bytes, dir, names, numbered_files(sets[0], "input_"), options);
      r.status = CaseStatus::passed;
      return r;
    }
    for (const fs::path& set : sets) {
      std::vector<std::string> in_files = numbered_files(set, "input_");
      std::vector<std::string> out_files = numbered_files(set, "output_");
      Graph g = import_freezing(bytes, dir, names, in_files);
      TensorMap inputs;
      for (size_t i = 0; i < names.size() && i < in_files.size(); ++i) {
        if (!g.find_value(names[i]) || !g.find_value(names[i])->is_graph_input) continue;
        inputs[names[i]] = read_tensor_pb(in_files[i]);
      }
      std::vector<std::string> output_names;
      for (const Value* v : g.outputs)
        output_names.push_back(v->name);
      TensorMap outputs = options.target == "ref"
                              ? run_reference(g, inputs)
                              : run_compiled(bytes, dir, names, in_files, inputs, options);
      VTC_CHECK(out_files.size() == g.outputs.size())
          << set.filename().string() << ": " << out_files.size() << " expected outputs, the "
          << "model has " << g.outputs.size();
      for (size_t k = 0; k < g.outputs.size(); ++k) {
        Tensor expected = read_tensor_pb(out_files[k]);
        Comparison c = compare_allclose(outputs.at(g.outputs[k]->name), expected, 1e-3, 1e-7);
        VTC_CHECK(c.ok) << set.filename().string() << ": output '" << g.outputs[k]->name << "' "
                        << c.message;
      }
    }
    r.status = CaseStatus::passed;
  } catch (const Unsupported& e) {
    r.status = CaseStatus::unsupported;
    r.reason = e.what();
  } catch (const std::exception& e) {
    r.status = CaseStatus::failed;
    r.reason = e.what();
  }
  return r;
}

CaseResult run_conformance_case_isolated(const std::string& dir,
                                         const ConformanceOptions& options) {
  int fds[2];
  VTC_CHECK(pipe(fds) == 0) << "pipe failed";
  pid_t pid = fork();
  VTC_CHECK(pid >= 0) << "fork failed";
  if (pid == 0) {
    close(fds[0]);
    CaseResult r = run_conformance_case(dir, options);
    std::string msg = std::string(status_name(r.status)) + "\n" + r.op + "\n" +
                      (r.data_movement ? "1" : "0") + "\n" + r.reason;
    size_t off = 0;
    while (off < msg.size()) {
      ssize_t w = write(fds[1], msg.data() + off, msg.size() - off);
      if (w <= 0) break;
      off += size_t(w);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(int64_t(options.timeout_seconds * 1000));
  bool timed_out = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, int(std::min<int64_t>(left, 1000)));
    if (ready <= 0) continue;
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    msg.append(buf, size_t(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  CaseResult r;
  r.name = fs::path(dir).filename().string();
  r.op = "?";
  if (timed_out) {
    r.reason = "timed out after " + std::to_string(int(options.timeout_seconds)) + " s";
    return r;
  }
  if (WIFSIGNALED(status)) {
    r.reason = "crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
    return r;
  }
  size_t a = msg.find('\n'), b = msg.find('\n', a + 1), c = msg.find('\n', b + 1);
  if (a == std::string::npos || b == std::string::npos || c == std::string::npos) {
    r.reason = "the case's process ended without a result";
    return r;
  }
  std::string status_text = msg.substr(0, a);
  r.status = status_text == "passed"        ? CaseStatus::passed
             : status_text == "unsupported" ? CaseStatus::unsupported
                                            : CaseStatus::failed;
  r.op = msg.substr(a + 1, b - a - 1);
  r.data_movement = msg.substr(b + 1, c - b - 1) == "1";
  r.reason = msg.substr(c + 1);
  return r;
}

std::vector<std::string> list_conformance_cases(const std::string& root,
                                                const std::string& filter) {
  VTC_CHECK(fs::is_directory(root)) << root << ": not a directory (install libonnx-testdata "
                                    << "or name a folder of ONNX test cases)";
  std::regex re(filter.empty() ? ".*" : filter);
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    if (e.is_directory() && fs::exists(e.path() / "model.onnx") && std::regex_search(name, re))
      dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

} // namespace vtc
