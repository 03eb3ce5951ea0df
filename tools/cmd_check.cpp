// `vtc check MODEL`: runs the model compiled with every strategy (none, type1, greedy) on a
// compiled target (--target cpu or cuda), on the reference interpreter and on onnxruntime, all
// on the same inputs, and checks the
// project's two correctness rules on whole models: the strategies agree bit for bit (only
// loads and stores differ between them, never arithmetic), and the results are within the
// stated tolerance (relative L2 per output: f32 1e-5, f16/bf16 1e-2) of the reference and of
// onnxruntime. Ends with
//   check: strategies bitwise-equal: yes|no; max rel err vs ref: E; vs onnxruntime: E2
// and exits non-zero when a rule is broken. With --compiled-only, a program that leaves any step
// to the reference interpreter breaks a rule too (each such step's nodes are named).
#include <chrono>
#include <fmt/core.h>
#include <memory>

#include "commands.h"
#include "lower/program.h"
#include "onnxruntime_peer.h"
#include "ref/compare.h"
#include "session_cli.h"
#include "vtc/error.h"

namespace vtc::cli {

namespace {

struct CheckArgs {
  std::string model;
  TargetKind target = TargetKind::cpu;
  std::vector<std::string> inputs;
  uint64_t seed = 0;
  std::string python = "python3";
  bool compiled_only = false;
  Options options;
};

// The largest relative L2 error of `actual` against `expected` over the outputs; clears `ok`
// when one is over its dtype's tolerance. Prints each output when `print`, failures always.
double compare_all(const std::string& what, const HostTensorMap& actual,
                   const HostTensorMap& expected, const std::vector<TensorSpec>& outputs,
                   bool print, bool& ok) {
  double worst = 0;
  for (const TensorSpec& spec : outputs) {
    auto it = expected.find(spec.name);
    VTC_CHECK(it != expected.end()) << what << " has no output '" << spec.name << "'";
    DType common = it->second.dtype() == spec.type.dtype ? spec.type.dtype : DType::f64;
    double tol = model_tolerance(spec.type.dtype);
    Comparison c =
        compare_rel_l2(converted(actual.at(spec.name), common), converted(it->second, common), tol);
    worst = std::max(worst, c.rel_l2_err);
    if (print || !c.ok)
      fmt::print("  {:<20} vs {:<24} rel L2 {:.3g}, max abs {:.3g} (tolerance {:g}){}\n", spec.name,
                 what, c.rel_l2_err, c.max_abs_err, tol, c.ok ? "" : "  FAIL: " + c.message);
    ok &= c.ok;
  }
  return worst;
}

// The nodes an interpreter step runs: "Resize 'up', Pad 'p'".
std::string fallback_nodes(const StepInfo& step) {
  std::string s;
  for (const Node* n : step.fallback)
    s += (s.empty() ? "" : ", ") + n->op + " '" + n->name + "'";
  return s;
}

int check(const CheckArgs& args) {
  VTC_CHECK(args.target != TargetKind::ref)
      << "vtc check compares a compiled target with the reference: --target cpu or cuda";
  Options ref_options = args.options;
  ref_options.target = TargetKind::ref;
  fmt::print(stderr, "check: reference interpreter ...\n");
  Session ref(args.model, ref_options);
  HostTensorMap inputs = model_inputs(ref.inputs(), args.inputs, args.seed);
  HostTensorMap expected = ref.run(inputs);

  // On cuda the profiled greedy plan chooses, node by node, between a library and vtc's
  // kernel: every strategy is checked with the implementations it kept.
  Options checked = args.options;
  checked.target = args.target;
  if (args.target == TargetKind::cuda && args.options.profile) {
    fmt::print(stderr, "check: profiling the greedy plan's implementations on the device ...\n");
    Options p = checked;
    p.strategy = StrategyKind::greedy;
    Session profiled(args.model, p);
    checked.library = profiled.options().library;
    checked.library_nodes = profiled.options().library_nodes;
    if (const auto plan = profiled.profiled_plan()) {
      int on_vtc = 0;
      for (const ProfiledNode& n : plan->nodes)
        on_vtc += !n.on_library;
      fmt::print("profiled on {}: kept {}; {} of {} library nodes on vtc's kernels\n",
                 target_kind_name(args.target), plan->kept, on_vtc, plan->nodes.size());
    }
  }

  std::vector<std::pair<std::string, HostTensorMap>> results;
  int threads = 1;
  int interpreted = 0;
  for (const char* strategy : {"none", "type1", "greedy"}) {
    Options o = checked;
    o.target = args.target;
    o.strategy = *parse_strategy_kind(strategy);
    o.profile = false; // the strategy's own plan is what is checked
    fmt::print(stderr, "check: {}: lowering, compiling, running ...\n", strategy);
    const auto start = std::chrono::steady_clock::now();
    Session s(args.model, o);
    const double ready =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ProgramCounts c = count_steps(s);
    fmt::print("{} ({}): {} steps, {} copies, {} on the interpreter, arena {} bytes, ready in "
               "{:.2f} s (compiler {:.2f} s)\n",
               strategy, target_kind_name(args.target), c.steps, c.copies, c.interpreted,
               s.peak_bytes(), ready, s.compile_seconds());
    threads = s.threads();
    interpreted += c.interpreted;
    if (s.has_program())
      for (const StepInfo& step : s.program().steps)
        if (!step.fallback.empty()) fmt::print("  interpreter step: {}\n", fallback_nodes(step));
    results.emplace_back(strategy, s.run(inputs));
  }

  bool equal = true;
  for (size_t k = 1; k < results.size(); ++k)
    for (const TensorSpec& spec : ref.outputs()) {
      const Tensor& a = results[k].second.at(spec.name);
      const Tensor& b = results[0].second.at(spec.name);
      if (a.bitwise_equal(b)) continue;
      Comparison c = compare_allclose(a, b, 0, 0);
      fmt::print("  {} differs from none on '{}': {} (max abs {:.3g})\n", results[k].first,
                 spec.name, c.message, c.max_abs_err);
      equal = false;
    }

  bool ok = equal && (!args.compiled_only || interpreted == 0);
  double vs_ref = 0;
  for (const auto& [strategy, outputs] : results)
    vs_ref = std::max(vs_ref, compare_all("ref (" + strategy + ")", outputs, expected,
                                          ref.outputs(), strategy == "greedy", ok));

  fmt::print(stderr, "check: onnxruntime on {} threads ...\n", threads);
  PeerRun ort = run_onnxruntime(args.model, inputs, threads, 0, 1, args.python);
  std::string vs_ort = "n/a";
  if (ort.available) {
    double worst = 0;
    for (const auto& [strategy, outputs] : results)
      worst = std::max(worst, compare_all("onnxruntime (" + strategy + ")", outputs, ort.outputs,
                                          ref.outputs(), strategy == "greedy", ok));
    vs_ort = fmt::format("{:.3g}", worst);
  } else {
    fmt::print("  onnxruntime n/a: {}\n", ort.reason);
  }
  fmt::print("check: strategies bitwise-equal: {}; max rel err vs ref: {:.3g}; vs onnxruntime: "
             "{}\n",
             equal ? "yes" : "no", vs_ref, vs_ort);
  if (args.compiled_only && interpreted)
    fmt::print("check: FAIL: {} interpreter steps over the three programs (--compiled-only)\n",
               interpreted);
  return ok ? 0 : 1;
}

} // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Check that every strategy gives bitwise-equal outputs that match the reference "
               "interpreter and onnxruntime");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--input,-i", args->inputs,
                  "NAME=FILE (.npy or .pb); inputs not given get seeded random values");
  cmd->add_option("--seed", args->seed, "seed for random inputs");
  add_target_option(cmd, args->target, "the compiled target to check: cpu or cuda");
  cmd->add_flag("--compiled-only", args->compiled_only,
                "fail when any step of a program runs on the reference interpreter");
  cmd->add_option("--python", args->python, "python with onnxruntime, for the peer")
      ->capture_default_str();
  add_session_flags(cmd, args->options, false);
  cmd->callback([args, &exit_code] { exit_code = check(*args); });
}

} // namespace vtc::cli
