// `vtc opt MODEL --print-after=STAGE`: runs the compiler pipeline and prints the state after
// one stage, in the stable text form golden tests compare against: import, canonicalize,
// fusion, lower (the program's buffers, steps and each kernel operand's access, strategy
// none) or source (the translation unit generated for it in the target's dialect).
#include <fmt/core.h>

#include "codegen/translation_unit.h"
#include "commands.h"
#include "frontend/onnx_import.h"
#include "ir/printer.h"
#include "lower/lower.h"
#include "passes/fusion.h"
#include "runtime/lowering.h"
#include "session_cli.h"
#include "target/target.h"
#include "vtc/error.h"

namespace vtc::cli {

namespace {

struct OptArgs {
  std::string model;
  std::string stage = "fusion";
  LibraryMode library = LibraryMode::automatic;
  TargetKind target = TargetKind::cpu;
  StrategyKind strategy = StrategyKind::greedy;
  std::vector<std::string> donate;
  ImportOptions import;
};

int opt(const OptArgs& args) {
  static const std::vector<std::string> stages = {"import", "canonicalize", "fusion", "lower",
                                                  "source"};
  VTC_CHECK(std::find(stages.begin(), stages.end(), args.stage) != stages.end())
      << "unknown stage '" << args.stage << "' (import, canonicalize, fusion, lower, source)";
  const Target& target = target_for(args.target);
  Graph g = import_onnx_file(args.model, args.import);
  if (args.stage == "import") return fmt::print("{}", print_graph(g)), 0;
  canonicalize_for_target(g, args.target);
  if (args.stage == "canonicalize") return fmt::print("{}", print_graph(g)), 0;
  KernelGraph kg = fuse(g, target.fuse_options());
  if (args.stage == "fusion") return fmt::print("{}", print_kernel_graph(kg)), 0;
  Options options;
  options.target = args.target;
  options.strategy = args.strategy;
  options.library = args.library;
  options.donate = args.donate;
  Program p = lower_for_target(g, options);
  if (args.stage == "lower") return fmt::print("{}", print_program(p)), 0;
  fmt::print("{}", generate_translation_unit(p, target.dialect()).source);
  return 0;
}

} // namespace

void add_opt_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<OptArgs>();
  CLI::App* cmd = app.add_subcommand("opt", "Run the compiler pipeline and print one stage");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--print-after", args->stage,
                  "stage to print: import, canonicalize, fusion, lower, source");
  add_target_option(cmd, args->target, "the target whose pipeline runs: cpu or cuda");
  add_library_option(cmd, args->library);
  add_strategy_option(cmd, args->strategy,
                      "the strategy the lower and source stages show: none, type1 or greedy");
  cmd->add_option("--donate", args->donate,
                  "a graph input the program may update in place (repeatable)");
  add_dims_option(cmd, args->import.dims);
  cmd->callback([args, &exit_code] { exit_code = opt(*args); });
}

} // namespace vtc::cli
