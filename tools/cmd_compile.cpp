// `vtc compile MODEL`: builds a model's code into the cache without running it, once per
// strategy asked for, so that the first run on the machine that runs it starts warm. With
// `--target cuda --arch sm_90a` no GPU is needed: the cubins are built here for that
// architecture (and the driver of --cuda-driver) and a later `vtc run` / `bench` / Session on
// such a GPU, with the same flags and cache, finds them (copy the cache directory over).
#include <fmt/core.h>

#include "commands.h"
#include "session_cli.h"
#include "vtc/error.h"

namespace vtc::cli {

namespace {

struct CompileArgs {
  std::string model;
  TargetKind target = TargetKind::cpu;
  std::vector<std::string> strategies{"greedy"};
  AheadOfTime ahead;
  Options options;
};

int compile(const CompileArgs& args) {
  VTC_CHECK(args.target != TargetKind::ref)
      << "vtc compile builds code for a compiled target: --target cpu or cuda, not ref";
  VTC_CHECK(!args.strategies.empty()) << "--strategies: none given";
  for (const std::string& strategy : args.strategies) {
    Options o = args.options;
    o.target = args.target;
    auto kind = parse_strategy_kind(strategy);
    VTC_CHECK(kind) << "--strategies: unknown strategy '" << strategy
                    << "' (none, type1 or greedy)";
    o.strategy = *kind;
    const CompiledAhead c = compile_ahead(args.model, o, args.ahead);
    fmt::print("compile: {} {} for {}: {} kernels in {} objects, {}\n", strategy,
               target_kind_name(args.target), c.arch, c.kernels, c.objects,
               c.cached ? std::string("all cached")
                        : fmt::format("compiled in {:.1f} s", c.seconds));
  }
  return 0;
}

} // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "Build a model's code into the cache without running it (ahead of time)");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  add_target_option(cmd, args->target, "the target to build for: cpu or cuda");
  cmd->add_option("--strategies", args->strategies, "strategies to build, in order")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--arch", args->ahead.cuda_arch,
                  "cuda: the GPU architecture to build for, e.g. sm_90a (default: this "
                  "machine's GPU)");
  cmd->add_option("--cuda-driver", args->ahead.cuda_driver_version,
                  "cuda: the driver version of the machine that will run it, as "
                  "cuDriverGetVersion gives it (13000 for CUDA 13.0; default: this machine's "
                  "driver, else the CUDA toolkit's version)");
  add_session_flags(cmd, args->options, false);
  cmd->callback([args, &exit_code] { exit_code = compile(*args); });
}

} // namespace vtc::cli
