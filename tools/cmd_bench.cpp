// `vtc bench MODEL`: times the model compiled with each strategy (none, type1, greedy),
// onnxruntime and OpenVINO (f32, where installed) in the same run, on the same seeded inputs
// and thread count; reports medians after warm-up, peak (arena) memory, the copy steps each
// strategy leaves, and where the greedy program spends its time. Progress goes to stderr;
// the last line on stdout is
//   bench: none X ms, greedy Y ms, onnxruntime Z ms, openvino W ms, peak none A MB, greedy B MB
// On --target cuda the inputs and outputs live in device memory (uploaded once, as a
// framework's tensors would be), each run replays the program's CUDA graphs and waits for
// them, the breakdown comes from one more run with every step timed by CUDA events, and the
// peer is left to the GPU benchmark (onnxruntime here runs on the CPU).
// --interleave N compiles every strategy first and starts the peers, then takes the timed runs
// of every strategy and peer in N blocks in turn.
// --json FILE writes the same figures as structured values for bench/gpu (medians per
// strategy, memory, copy steps, compile times, every step's time with its bytes and flops);
// --input binds inputs from files and --output-dir writes the last strategy's outputs, so a
// peer can be checked against them.
#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.h"
#include "device/cuda_device.h"
#include "device/cuda_objects.h"
#include "frontend/tensor_io.h"
#include "lower/program.h"
#include "onnxruntime_peer.h"
#include "session_cli.h"
#include "vtc/error.h"

namespace vtc::cli {

namespace {

struct BenchArgs {
  std::string model;
  TargetKind target = TargetKind::cpu;
  int repeat = 20;
  int warmup = 3;
  int top = 10;
  int rotate = 1;     // sets of bound tensors, used in turn
  int interleave = 1; // blocks of timed runs the strategies take in turn
  uint64_t seed = 0;
  std::string python = "python3";
  std::vector<std::string> strategies{"none", "type1", "greedy"};
  std::vector<std::string> inputs; // NAME=FILE
  std::string json;                // --json FILE
  std::string output_dir;          // --output-dir DIR
  Options options;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string megabytes(int64_t bytes) {
  return fmt::format("{:.3f}", double(bytes) / 1e6);
}

struct Measured {
  std::string strategy;
  std::unique_ptr<Session> session;
  std::vector<device::DeviceBuffer> device_tensors; // cuda: the bound inputs and outputs
  double median_ms = 0, min_ms = 0;
  double ready_s = 0;          // Session construction: import, strategy, lowering, compile
  std::vector<double> step_ms; // median per step over the timed runs
};

// A view of `t`'s shape and dtype over a new device buffer of m's (holding t's bytes when
// `upload`).
TensorView device_view(Measured& m, const Tensor& t, bool upload) {
  device::DeviceBuffer& d = m.device_tensors.emplace_back(std::max<size_t>(t.nbytes(), 1));
  if (upload && t.nbytes()) d.upload(t.raw(), t.nbytes());
  TensorView v = TensorView::of(const_cast<Tensor&>(t));
  v.data = reinterpret_cast<void*>(uintptr_t(d.ptr()));
  return v;
}

// One set of the tensors a run binds.
struct Bound {
  ViewMap in, out;
};

// `sets` sets of the model's inputs (each holding `inputs`' values) and outputs, a donated
// input's output in its input's buffer; in device memory on cuda, else in `host`.
std::vector<Bound> bind_sets(Measured& m, const HostTensorMap& inputs, int sets, bool on_device,
                             std::deque<Tensor>& host) {
  std::vector<Bound> bound(sets);
  for (Bound& b : bound) {
    for (const auto& [name, t] : inputs)
      b.in.emplace(name,
                   on_device ? device_view(m, t, true) : TensorView::of(host.emplace_back(t)));
    for (const TensorSpec& spec : m.session->outputs()) {
      if (!spec.aliased_input.empty()) {
        b.out.emplace(spec.name, b.in.at(spec.aliased_input));
        continue;
      }
      Tensor& t = host.emplace_back(spec.type);
      b.out.emplace(spec.name, on_device ? device_view(m, t, false) : TensorView::of(t));
    }
  }
  return bound;
}

// The timed runs of one strategy: run i binds set i % --rotate of the tensors (so inputs that
// fit in a cache are not read from it every run); donated inputs are updated in place, as in
// decoding. Runs are taken in blocks so that strategies can take turns (--interleave).
struct Timing {
  std::deque<Tensor> host;
  std::vector<Bound> sets;
  std::vector<double> times;
  std::vector<std::vector<double>> steps; // per step, its time in each timed run
  int next = 0;                           // runs made so far, warm-up included
};

void run_once(Session& session, Timing& t) {
  const Bound& b = t.sets[size_t(t.next++) % t.sets.size()];
  session.run(b.in, b.out);
}

// Binds the tensors and makes the `warmup` runs.
void start_timing(Measured& m, Timing& t, const HostTensorMap& inputs, const BenchArgs& args) {
  t.sets = bind_sets(m, inputs, args.rotate, args.target == TargetKind::cuda, t.host);
  t.steps.resize(m.session->program().steps.size());
  for (int i = 0; i < args.warmup; ++i)
    run_once(*m.session, t);
}

// Makes `count` timed runs.
void time_runs(Measured& m, Timing& t, int count, const BenchArgs& args) {
  Session& s = *m.session;
  const bool on_device = args.target == TargetKind::cuda;
  for (int i = 0; i < count; ++i) {
    auto start = std::chrono::steady_clock::now();
    run_once(s, t);
    // On the GPU, device time by CUDA events, as the peers of bench/gpu are timed.
    t.times.push_back(on_device ? s.last_run_device_ms() : seconds_since(start) * 1e3);
    for (size_t k = 0; k < t.steps.size(); ++k)
      t.steps[k].push_back(s.last_step_times()[k] * 1e3);
  }
}

// The medians and minimum of the timed runs; on cuda, the step times of one more session.
void finish_timing(Measured& m, Timing& t, const BenchArgs& args) {
  Session& s = *m.session;
  m.median_ms = median(t.times);
  m.min_ms = *std::min_element(t.times.begin(), t.times.end());
  for (const auto& st : t.steps)
    m.step_ms.push_back(median(st));
  if (args.target != TargetKind::cuda) return;
  // Graph replays time no step: one more session, every step timed by CUDA events, of the
  // plan the first one kept.
  Options o = s.options();
  o.time_steps = true;
  if (s.profiled_plan() && s.profiled_plan()->kept_physical) o.strategy = StrategyKind::none;
  o.profile = false; // s.options() holds the implementations the profiled choice kept
  Session timed(args.model, o);
  VTC_CHECK(timed.program().steps.size() == t.steps.size())
      << "the step-timed session lowered a different program";
  t.next = 0;
  for (int i = 0; i < std::max(1, args.warmup); ++i)
    run_once(timed, t);
  for (auto& st : t.steps)
    st.clear();
  for (int i = 0; i < args.repeat; ++i) {
    run_once(timed, t);
    for (size_t k = 0; k < t.steps.size(); ++k)
      t.steps[k].push_back(timed.last_step_times()[k] * 1e3);
  }
  m.step_ms.clear();
  for (const auto& st : t.steps)
    m.step_ms.push_back(median(st));
}

// A peer of the cpu target (onnxruntime or OpenVINO), running beside vtc while it is timed.
struct Peer {
  std::string engine;
  std::unique_ptr<PeerSession> session;
};

// Starts `peer`: its process loads the model and makes its warm-up runs.
void start_peer(Peer& peer, const HostTensorMap& inputs, int threads, const BenchArgs& args) {
  fmt::print(stderr, "bench: {}: {} warm-up + {} timed runs on {} threads{} ...\n", peer.engine,
             args.warmup, args.repeat, threads,
             args.interleave > 1
                 ? fmt::format(", in {} blocks taken in turn with vtc's", args.interleave)
                 : "");
  peer.session = std::make_unique<PeerSession>(peer.engine, args.model, inputs, threads,
                                               args.warmup, args.python);
}

// The result of the peer running `engine` ("n/a" with `absent` where there is none), which
// then exits.
PeerRun finish_peer(std::vector<Peer>& peers, const std::string& engine,
                    const std::string& absent) {
  PeerRun run;
  run.reason = absent;
  for (Peer& peer : peers)
    if (peer.engine == engine && peer.session) run = peer.session->finish();
  if (run.available)
    fmt::print(stderr, "bench: {}: median {:.3f} ms ({})\n", engine, run.median_ms, run.how);
  else
    fmt::print(stderr, "bench: {}: n/a: {}\n", engine, run.reason);
  return run;
}

// Times the strategies `ms`: each one's warm-up, then their timed runs in --interleave blocks
// taken in turn with each other's and the peers' (so that a spell of load on the host falls on
// every system alike). Where blocks are taken in turn, each block starts with --warmup untimed
// runs too (after another system's block, the first runs are slower by a third and more: the
// caches hold the other's data), and a system's block starts once the threads of the others
// have stopped spinning (onnxruntime's spin for about 50 ms after a run, on one of the cores;
// OpenVINO's still took a quarter of a core in the second after its block, at vtc's).
void time_strategies(const std::vector<Measured*>& ms, std::vector<Peer>& peers,
                     const HostTensorMap& inputs, const BenchArgs& args) {
  std::deque<Timing> timings(ms.size());
  for (size_t j = 0; j < ms.size(); ++j) {
    fmt::print(stderr, "bench: {}: {} warm-up + {} timed runs on {} threads{} ...\n",
               ms[j]->strategy, args.warmup, args.repeat, ms[j]->session->threads(),
               ms.size() + peers.size() > 1
                   ? fmt::format(", in {} blocks taken in turn", args.interleave)
                   : "");
    start_timing(*ms[j], timings[j], inputs, args);
  }
  const int blocks = ms.size() + peers.size() > 1 ? args.interleave : 1;
  for (int b = 0; b < blocks; ++b) {
    const int runs = args.repeat * (b + 1) / blocks - args.repeat * b / blocks;
    // vtc's blocks start once every peer is idle too.
    for (Peer& peer : peers)
      if (b > 0) peer.session->wait_until_idle();
    for (size_t j = 0; j < ms.size(); ++j) {
      for (int i = 0; blocks > 1 && b > 0 && i < args.warmup; ++i)
        run_once(*ms[j]->session, timings[j]);
      time_runs(*ms[j], timings[j], runs, args);
    }
    for (size_t p = 0; p < peers.size(); ++p) {
      // vtc's pool threads spin 2 ms after a loop: the peer starts once they sleep.
      if (p == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));
      if (b > 0) peers[p].session->warm_up(args.warmup);
      peers[p].session->time(runs);
      peers[p].session->wait_until_idle();
    }
  }
  for (size_t j = 0; j < ms.size(); ++j) {
    Measured& m = *ms[j];
    finish_timing(m, timings[j], args);
    fmt::print(stderr, "bench: {}: median {:.3f} ms (min {:.3f} ms)\n", m.strategy, m.median_ms,
               m.min_ms);
    if (const auto p = m.session->profiled_plan())
      print_profiled(stderr, "bench: " + m.strategy, *p);
  }
}

void print_top_steps(const Measured& m, int top) {
  const Program& p = m.session->program();
  double total = 0;
  for (double t : m.step_ms)
    total += t;
  std::vector<size_t> order(m.step_ms.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return m.step_ms[a] > m.step_ms[b]; });
  fmt::print("\n{} program: {} steps, {:.3f} ms in steps (median run {:.3f} ms); top steps:\n",
             m.strategy, p.steps.size(), total, m.median_ms);
  for (size_t r = 0; r < order.size() && r < size_t(top); ++r) {
    const StepInfo& step = p.steps[order[r]];
    double ms = m.step_ms[order[r]];
    double gbps = ms > 0 ? double(step.bytes) / (ms * 1e6) : 0;
    fmt::print("  {:6.3f} ms {:5.1f}%  {:7.2f} GB/s  {}{}{}\n", ms,
               total > 0 ? 100 * ms / total : 0.0, gbps, step.name, step.is_copy ? "  [copy]" : "",
               step.fallback.empty() ? "" : "  [interpreter]");
  }
}

// Bytes of the tensors the caller binds: every input and every output that is not a donated
// input's buffer.
int64_t bound_bytes(const Session& s) {
  int64_t bytes = 0;
  for (const TensorSpec& t : s.inputs())
    bytes += int64_t(t.type.nbytes());
  for (const TensorSpec& t : s.outputs())
    if (t.aliased_input.empty()) bytes += int64_t(t.type.nbytes());
  return bytes;
}

// The workspace's parts by what holds them (names as Session::workspace_parts gives them).
nlohmann::json workspace_parts_json(const Session& s) {
  nlohmann::json parts = nlohmann::json::object();
  for (const auto& [what, bytes] : s.workspace_parts())
    parts[what] = bytes;
  return parts;
}

// The profiled choice of the greedy plan (Options::profile), null where none was made.
nlohmann::json profiled_json(const Session& s) {
  const std::optional<ProfiledPlan> p = s.profiled_plan();
  if (!p) return nullptr;
  nlohmann::json nodes = nlohmann::json::array();
  for (const ProfiledNode& n : p->nodes)
    nodes.push_back({{"node", n.node},
                     {"library", n.library},
                     {"library_ms", n.library_ms},
                     {"vtc_ms", n.vtc_ms},
                     {"on_library", n.on_library}});
  return {{"greedy_ms", p->greedy_ms},
          {"physical_ms", p->physical_ms},
          {"vtc_kernels_ms", p->vtc_kernels_ms},
          {"per_node_ms", p->per_node_ms},
          {"kept", p->kept},
          {"nodes", nodes},
          {"from_cache", p->from_cache}};
}

nlohmann::json strategy_json(const Measured& m) {
  const Session& s = *m.session;
  ProgramCounts c = count_steps(s);
  nlohmann::json steps = nlohmann::json::array();
  const Program& p = s.program();
  for (size_t k = 0; k < p.steps.size(); ++k) {
    const StepInfo& step = p.steps[k];
    steps.push_back({{"name", step.name},
                     {"kind", step_kind_name(step.kind)},
                     {"ms", k < m.step_ms.size() ? m.step_ms[k] : 0.0},
                     {"bytes", step.bytes},
                     {"flops", step.flops}});
  }
  return {{"median_ms", m.median_ms},
          {"min_ms", m.min_ms},
          {"arena_bytes", s.peak_bytes()},
          {"constant_bytes", s.constant_bytes()},
          {"workspace_bytes", s.workspace_bytes()},
          {"workspace_parts", workspace_parts_json(s)},
          {"bound_bytes", bound_bytes(s)},
          {"steps", c.steps},
          {"copies", c.copies},
          {"interpreted", c.interpreted},
          {"ready_s", m.ready_s},
          {"compile_s", s.compile_seconds()},
          {"profiled", profiled_json(s)},
          {"step_times", std::move(steps)}};
}

nlohmann::json peer_json(const PeerRun& run) {
  nlohmann::json peer = {{"available", run.available}};
  if (run.available)
    peer.update({{"median_ms", run.median_ms}, {"how", run.how}, {"blocks", run.blocks}});
  else
    peer["reason"] = run.reason;
  return peer;
}

void write_json(const BenchArgs& args, const std::vector<Measured>& runs, const PeerRun& ort,
                const PeerRun& ov) {
  nlohmann::json strategies = nlohmann::json::object();
  for (const Measured& m : runs)
    strategies[m.strategy] = strategy_json(m);
  nlohmann::json doc = {{"model", args.model},
                        {"target", target_kind_name(args.target)},
                        {"repeat", args.repeat},
                        {"warmup", args.warmup},
                        {"rotate", args.rotate},
                        {"interleave", args.interleave},
                        {"timer", args.target == TargetKind::cuda
                                      ? "CUDA events around a run on vtc's stream"
                                      : "wall clock around a run"},
                        {"threads", runs.front().session->threads()},
                        {"strategies", std::move(strategies)},
                        {"onnxruntime", peer_json(ort)},
                        {"openvino", peer_json(ov)}};
  std::ofstream out(args.json);
  VTC_CHECK(out) << "--json: cannot write " << args.json;
  out << doc.dump(1) << "\n";
  VTC_CHECK(out.good()) << "--json: error writing " << args.json;
}

// One more run of `m` on host tensors; writes each output as NAME.npy into `dir`.
void write_outputs(Measured& m, const HostTensorMap& inputs, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  VTC_CHECK(!ec) << "--output-dir: cannot create " << dir << ": " << ec.message();
  HostTensorMap outputs = m.session->run(inputs);
  for (const TensorSpec& spec : m.session->outputs())
    write_npy(dir + "/" + file_name_for(spec.name) + ".npy", outputs.at(spec.name));
  fmt::print(stderr, "bench: {}: outputs written to {}\n", m.strategy, dir);
}

const Measured* find_run(const std::vector<Measured>& runs, const std::string& strategy) {
  for (const Measured& m : runs)
    if (m.strategy == strategy) return &m;
  return nullptr;
}

std::string time_text(const Measured* m) {
  return m ? fmt::format("{:.3f} ms", m->median_ms) : std::string("n/a");
}

std::string peak_text(const Measured* m) {
  return m ? megabytes(m->session->peak_bytes()) + " MB" : std::string("n/a");
}

int bench(const BenchArgs& args) {
  VTC_CHECK(args.target != TargetKind::ref)
      << "vtc bench measures compiled code: --target cpu or cuda, not ref";
  VTC_CHECK(args.repeat >= 1 && args.warmup >= 0) << "--repeat must be >= 1 and --warmup >= 0 (got "
                                                  << args.repeat << ", " << args.warmup << ")";
  VTC_CHECK(!args.strategies.empty()) << "--strategies: none given";
  VTC_CHECK(args.rotate >= 1) << "--rotate must be >= 1 (got " << args.rotate << ")";
  VTC_CHECK(args.interleave >= 1 && args.interleave <= args.repeat)
      << "--interleave must be in [1, --repeat] (got " << args.interleave << ")";
  std::vector<Measured> runs;
  HostTensorMap inputs;
  bool have_inputs = false;
  for (const std::string& strategy : args.strategies) {
    Options o = args.options;
    o.target = args.target;
    auto kind = parse_strategy_kind(strategy);
    VTC_CHECK(kind) << "--strategies: unknown strategy '" << strategy
                    << "' (none, type1 or greedy)";
    o.strategy = *kind;
    fmt::print(stderr, "bench: {}: lowering and compiling ...\n", strategy);
    auto start = std::chrono::steady_clock::now();
    Measured m;
    m.strategy = strategy;
    m.session = std::make_unique<Session>(args.model, o);
    m.ready_s = seconds_since(start);
    ProgramCounts c = count_steps(*m.session);
    fmt::print(stderr,
               "bench: {}: {} steps, {} copies, {} on the interpreter, arena {} MB, "
               "ready in {:.2f} s (compiler {:.2f} s)\n",
               strategy, c.steps, c.copies, c.interpreted, megabytes(m.session->peak_bytes()),
               m.ready_s, m.session->compile_seconds());
    if (m.session->workspace_bytes() > 0) {
      std::string parts;
      for (const auto& [what, bytes] : m.session->workspace_parts())
        if (bytes > 0)
          parts += fmt::format("{}{} {} MB", parts.empty() ? "" : ", ", what, megabytes(bytes));
      fmt::print(stderr, "bench: {}: workspace {} MB ({})\n", strategy,
                 megabytes(m.session->workspace_bytes()), parts);
    }
    if (!have_inputs) {
      inputs = model_inputs(m.session->inputs(), args.inputs, args.seed);
      have_inputs = true;
    }
    runs.push_back(std::move(m));
    if (args.interleave > 1) continue; // timed below, once every strategy is compiled
    std::vector<Peer> none;
    time_strategies({&runs.back()}, none, inputs, args);
  }
  // The cpu target's peers, onnxruntime and OpenVINO (onnxruntime on the GPU machine runs on its
  // CPU: bench/gpu has the GPU's peers). With --interleave they take their blocks of timed runs
  // in turn with the strategies'; otherwise each one's runs follow vtc's.
  const int threads = runs.front().session->threads();
  std::vector<Peer> peers;
  if (args.target != TargetKind::cuda)
    for (const char* engine : {"onnxruntime", "openvino"})
      peers.push_back({engine, nullptr});
  if (args.interleave > 1) {
    for (Peer& peer : peers)
      start_peer(peer, inputs, threads, args);
    std::vector<Measured*> all;
    for (Measured& m : runs)
      all.push_back(&m);
    time_strategies(all, peers, inputs, args);
  } else {
    for (Peer& peer : peers) {
      start_peer(peer, inputs, threads, args);
      peer.session->time(args.repeat);
    }
  }
  const std::string no_peer = "no peer on target cuda (onnxruntime here runs on the CPU)";
  PeerRun ort = finish_peer(peers, "onnxruntime", no_peer);
  PeerRun ov = finish_peer(peers, "openvino", "no peer on target cuda");

  if (!args.output_dir.empty()) write_outputs(runs.back(), inputs, args.output_dir);
  if (!args.json.empty()) write_json(args, runs, ort, ov);

  const Measured* none = find_run(runs, "none");
  const Measured* greedy = find_run(runs, "greedy");
  print_top_steps(greedy ? *greedy : runs.back(), args.top);
  fmt::print("\ncopy steps left:");
  for (const Measured& m : runs)
    fmt::print(" {} {}{}", m.strategy, count_steps(*m.session).copies,
               &m == &runs.back() ? "\n" : ",");
  fmt::print("times (median of {} after {} warm-up, {} threads):", args.repeat, args.warmup,
             threads);
  for (const Measured& m : runs)
    fmt::print(" {} {:.3f} ms{}", m.strategy, m.median_ms, &m == &runs.back() ? "\n" : ",");
  std::string ort_text = ort.available ? fmt::format("onnxruntime {:.3f} ms", ort.median_ms)
                                       : std::string("onnxruntime n/a");
  std::string ov_text =
      ov.available ? fmt::format("openvino {:.3f} ms", ov.median_ms) : std::string("openvino n/a");
  fmt::print("bench: none {}, greedy {}, {}, {}, peak none {}, greedy {}\n", time_text(none),
             time_text(greedy), ort_text, ov_text, peak_text(none), peak_text(greedy));
  return 0;
}

} // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time a model compiled with each strategy against onnxruntime, in one run");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  add_target_option(cmd, args->target, "where to run: cpu or cuda");
  cmd->add_option("--repeat", args->repeat, "timed runs per strategy")->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "untimed runs first")->capture_default_str();
  cmd->add_option("--top", args->top, "steps to list in the time breakdown")->capture_default_str();
  cmd->add_option("--rotate", args->rotate,
                  "sets of inputs and outputs the runs use in turn (inputs that fit in a cache "
                  "are then not read from it every run)")
      ->capture_default_str();
  cmd->add_option("--interleave", args->interleave,
                  "compile every strategy first, then split each one's timed runs into this many "
                  "blocks taken in turn (a spell of load on the host then falls on all alike)")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed for the random inputs");
  cmd->add_option("--input,-i", args->inputs,
                  "NAME=FILE (.npy or .pb); inputs not given get seeded random values");
  cmd->add_option("--strategies", args->strategies, "strategies to time, in order")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--json", args->json,
                  "also write the figures as JSON: per strategy its median, memory, copy "
                  "steps, compile time and every step's time, bytes and flops");
  cmd->add_option("--output-dir,-o", args->output_dir,
                  "write the last strategy's outputs (one more run) as NAME.npy here");
  cmd->add_option("--python", args->python, "python with onnxruntime, for the peer")
      ->capture_default_str();
  add_session_flags(cmd, args->options, false);
  cmd->callback([args, &exit_code] { exit_code = bench(*args); });
}

} // namespace vtc::cli
