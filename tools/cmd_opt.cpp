// `vtc opt MODEL --print-after=STAGE`: runs the compiler pipeline and prints the state after
// one stage, in the stable text form golden tests compare against: import, canonicalize,
// fusion, lower (the program's buffers and steps) or source (the generated C++).
#include <fmt/core.h>

#include "codegen/conv_max_pool_rule.h"
#include "codegen/kernel_choice.h"
#include "commands.h"
#include "frontend/onnx_import.h"
#include "ir/printer.h"
#include "lower/lower.h"
#include "passes/canonicalize.h"
#include "passes/fusion.h"
#include "support/error.h"

namespace vtc::cli {

namespace {

struct OptArgs {
  std::string model;
  std::string stage = "fusion";
  std::string library = "auto";
};

std::string print_program(const Program& p) {
  std::string s = "program (strategy " + p.strategy + ")\n";
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferInfo& b = p.buffers[i];
    s += fmt::format("  buffer {} {} %{}: {}{}\n", i, buffer_role_name(b.role), b.name,
                     type_str(b.type),
                     b.alias_of >= 0 ? fmt::format(" (aliases buffer {})", b.alias_of) : "");
  }
  for (const StepInfo& st : p.steps) {
    std::string reads, writes;
    for (int r : st.reads)
      reads += (reads.empty() ? "" : ",") + std::to_string(r);
    for (int w : st.writes)
      writes += (writes.empty() ? "" : ",") + std::to_string(w);
    s += fmt::format("  step {} reads [{}] writes [{}]{}\n", st.name, reads, writes,
                     st.fallback.empty() ? "" : " (reference interpreter)");
  }
  return s;
}

int opt(const OptArgs& args) {
  static const std::vector<std::string> stages = {"import", "canonicalize", "fusion", "lower",
                                                  "source"};
  VTC_CHECK(std::find(stages.begin(), stages.end(), args.stage) != stages.end())
      << "unknown stage '" << args.stage << "' (import, canonicalize, fusion, lower, source)";
  Graph g = import_onnx_file(args.model);
  if (args.stage == "import") return fmt::print("{}", print_graph(g)), 0;
  canonicalize(g);
  if (args.stage == "canonicalize") return fmt::print("{}", print_graph(g)), 0;
  KernelGraph kg = fuse(g, cpu_fuse_options());
  if (args.stage == "fusion") return fmt::print("{}", print_kernel_graph(kg)), 0;
  std::optional<LibraryMode> library = parse_library_mode(args.library);
  VTC_CHECK(library) << "unknown library mode '" << args.library << "' (auto, never, always)";
  choose_kernel_impls(kg, *library);
  Program p = lower_program(g, kg, StorageDecision{}, LowerOptions{});
  if (args.stage == "lower") return fmt::print("{}", print_program(p)), 0;
  fmt::print("{}", p.source);
  return 0;
}

} // namespace

void add_opt_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<OptArgs>();
  CLI::App* cmd = app.add_subcommand("opt", "Run the compiler pipeline and print one stage");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--print-after", args->stage,
                  "stage to print: import, canonicalize, fusion, lower, source");
  cmd->add_option("--library", args->library,
                  "f32 matrix products on OpenBLAS (lower, source): auto, never or always")
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = opt(*args); });
}

} // namespace vtc::cli
