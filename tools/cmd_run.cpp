// `vtc run MODEL`: runs a model (compiled for the cpu, or on the reference interpreter) on
// given or seeded random inputs and writes its outputs.
#include <chrono>
#include <filesystem>
#include <fmt/core.h>

#include "commands.h"
#include "frontend/tensor_io.h"
#include "session_cli.h"
#include "vtc/error.h"

namespace vtc::cli {

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  uint64_t seed = 0;
  Options options;
};

int run(const RunArgs& args) {
  auto start = std::chrono::steady_clock::now();
  Session session(args.model, args.options);
  double prepare_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  HostTensorMap inputs = model_inputs(session.inputs(), args.inputs, args.seed);
  start = std::chrono::steady_clock::now();
  HostTensorMap outputs = session.run(inputs);
  double run_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (session.has_program()) {
    ProgramCounts c = count_steps(session);
    fmt::print("run: target {}, strategy {}: {} steps ({} copies, {} on the interpreter), "
               "arena {} bytes; prepared in {:.2f} s, ran in {:.3f} ms\n",
               target_kind_name(args.options.target), strategy_kind_name(args.options.strategy),
               c.steps, c.copies, c.interpreted, session.peak_bytes(), prepare_s, run_ms);
  }
  if (!args.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.output_dir, ec);
    VTC_CHECK(!ec) << "cannot create output directory " << args.output_dir << ": " << ec.message();
  }
  for (const TensorSpec& out : session.outputs()) {
    const Tensor& t = outputs.at(out.name);
    fmt::print("output '{}': {} {}\n", out.name, type_str(t.type()), summary(t));
    if (!args.output_dir.empty()) {
      std::string path = args.output_dir + "/" + file_name_for(out.name) + ".npy";
      write_npy(path, t);
      fmt::print("  wrote {}\n", path);
    }
  }
  return 0;
}

} // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model and write its outputs");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--input,-i", args->inputs,
                  "NAME=FILE (.npy or .pb); inputs not given get seeded random values");
  cmd->add_option("--output-dir,-o", args->output_dir, "write each output as NAME.npy here");
  add_target_option(cmd, args->options.target,
                    "where to run: cpu (compiled) or ref (reference interpreter)");
  cmd->add_option("--seed", args->seed, "seed for random inputs");
  add_session_flags(cmd, args->options, true);
  cmd->callback([args, &exit_code] { exit_code = run(*args); });
}

} // namespace vtc::cli
