// `vtc explain MODEL`: which data-movement ops a strategy removes and how — per op its
// decision (virtual read side, virtual write side, in place, or a copy), the mapping type and
// the latency saving the cost model credited — with totals; then per kernel its
// implementation (template, OpenBLAS, or the reference interpreter); and the points-to graph
// as Graphviz text (--dot) or SVG drawn by the `dot` program (--svg). With --profile on cuda,
// the plans are compiled and timed on the GPU and the profiled choice is shown: each library
// node's time on the library and on vtc's kernel, and which won.
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "commands.h"
#include "frontend/onnx_import.h"
#include "jit/process.h"
#include "runtime/lowering.h"
#include "session_cli.h"
#include "strategy/explain.h"
#include "target/cpu_kernel_choice.h"
#include "vtc/error.h"

namespace vtc::cli {

namespace {

struct ExplainArgs {
  std::string model;
  Options options;
  std::string dot;
  std::string svg;
  bool profile = false;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  VTC_CHECK(f.good()) << "cannot write " << path;
  f << text;
  VTC_CHECK(f.good()) << "cannot write " << path;
}

int explain(const ExplainArgs& args) {
  VTC_CHECK(!args.profile || (args.options.target == TargetKind::cuda &&
                              args.options.strategy == StrategyKind::greedy))
      << "--profile: the profiled choice is made for strategy greedy on target cuda";
  ImportOptions import;
  import.dims = args.options.dims;
  Graph g = import_onnx_file(args.model, import);
  canonicalize_for_target(g, args.options.target);
  KernelPlan plan = plan_kernels(g, args.options);
  AnalyticCostModel model;
  Strategy s = choose_for_target(g, plan, args.options, model);
  fmt::print("{}", explain_text(s));
  fmt::print("kernels (library {}):\n{}", library_mode_name(args.options.library),
             kernel_impl_text(plan.kg));
  if (args.profile) {
    Options o = args.options;
    o.profile = true;
    Session session(args.model, o);
    const std::optional<ProfiledPlan> p = session.profiled_plan();
    if (p)
      print_profiled(stdout, "explain", *p);
    else
      fmt::print("explain: nothing to profile: greedy made no tensor virtual and put no node on "
                 "a library\n");
  }
  if (args.dot.empty() && args.svg.empty()) return 0;
  std::string dot = points_to_dot(s);
  std::string dot_path = args.dot;
  if (dot_path.empty())
    dot_path =
        (std::filesystem::temp_directory_path() /
         fmt::format("vtc-explain-{}.dot", std::filesystem::path(args.svg).filename().string()))
            .string();
  write_file(dot_path, dot);
  if (!args.svg.empty()) {
    jit::ProcessResult r = jit::run_process({"dot", "-Tsvg", "-o", args.svg, dot_path});
    if (args.dot.empty()) std::filesystem::remove(dot_path);
    VTC_CHECK(r.ok()) << "dot -Tsvg " << args.svg << ": " << r.describe_status() << " " << r.output;
  }
  return 0;
}

} // namespace

void add_explain_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Show which data-movement ops a strategy makes virtual, how, and what it saves");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  add_strategy_option(cmd, args->options.strategy, "none, type1 or greedy");
  add_target_option(cmd, args->options.target,
                    "the target whose kernels and library choices are explained (cpu, cuda)");
  cmd->add_option("--donate", args->options.donate,
                  "graph inputs vtc may update in place (a KV cache)");
  add_library_option(cmd, args->options.library);
  add_library_node_option(cmd, args->options.library_nodes);
  add_dims_option(cmd, args->options.dims);
  cmd->add_option("--cache-dir", args->options.cache_dir,
                  "with --profile: where compiled models are cached");
  cmd->add_flag("--profile", args->profile,
                "cuda, greedy: compile and time the plans on the GPU and show which "
                "implementation each library node runs on and by how much it won");
  cmd->add_option("--dot", args->dot, "write the points-to graph as Graphviz text");
  cmd->add_option("--svg", args->svg, "draw the points-to graph as SVG with `dot`");
  cmd->callback([args, &exit_code] { exit_code = explain(*args); });
}

} // namespace vtc::cli
