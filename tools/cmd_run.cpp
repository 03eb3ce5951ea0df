// `vtc run MODEL`: runs a model on given or seeded random inputs and writes its outputs.
#include <filesystem>
#include <fmt/core.h>
#include <map>

#include "commands.h"
#include "frontend/onnx_import.h"
#include "frontend/tensor_io.h"
#include "ref/interpreter.h"
#include "ref/random_inputs.h"
#include "support/error.h"

namespace vtc::cli {

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string target = "ref";
  uint64_t seed = 0;
};

// "NAME=FILE" pairs from the command line.
std::map<std::string, std::string> parse_bindings(const std::vector<std::string>& args) {
  std::map<std::string, std::string> m;
  for (const std::string& a : args) {
    auto eq = a.find('=');
    VTC_CHECK(eq != std::string::npos && eq > 0)
        << "--input '" << a << "' is not of the form NAME=FILE";
    m[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return m;
}

// A file name for an output value (ONNX names may hold '/' or ':').
std::string file_name_for(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      c = '_';
  return s;
}

std::string summary(const Tensor& t) {
  if (t.numel() == 0) return "empty";
  double lo = t.get_f64(0), hi = lo, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get_f64(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  return fmt::format("min {:.6g} max {:.6g} mean {:.6g}", lo, hi, sum / double(t.numel()));
}

int run(const RunArgs& args) {
  VTC_CHECK(args.target == "ref") << "unknown target '" << args.target
                                  << "' (available: ref)";
  Graph g = import_onnx_file(args.model);
  std::map<std::string, std::string> files = parse_bindings(args.inputs);
  TensorMap inputs;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value* in = g.inputs[i];
    auto it = files.find(in->name);
    if (it == files.end()) {
      fmt::print(stderr, "input '{}' not given: using seeded random values ({}, seed {})\n",
                 in->name, type_str(in->type), args.seed + i);
      inputs[in->name] = random_tensor(in->type, args.seed + i);
      continue;
    }
    Tensor t = read_tensor_file(it->second, in->type.dtype);
    VTC_CHECK(t.type() == in->type) << "input '" << in->name << "' from " << it->second << " is "
                                    << type_str(t.type()) << ", the model expects "
                                    << type_str(in->type);
    inputs[in->name] = std::move(t);
    files.erase(it);
  }
  for (const auto& [name, file] : files)
    VTC_FAIL() << "--input " << name << "=" << file << ": the model has no input '" << name
               << "'";
  TensorMap outputs = run_reference(g, inputs);
  if (!args.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.output_dir, ec);
    VTC_CHECK(!ec) << "cannot create output directory " << args.output_dir << ": "
                   << ec.message();
  }
  for (const Value* out : g.outputs) {
    const Tensor& t = outputs.at(out->name);
    fmt::print("output '{}': {} {}\n", out->name, type_str(t.type()), summary(t));
    if (!args.output_dir.empty()) {
      std::string path = args.output_dir + "/" + file_name_for(out->name) + ".npy";
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
  cmd->add_option("--target", args->target, "where to run: ref (reference interpreter)");
  cmd->add_option("--seed", args->seed, "seed for random inputs");
  cmd->callback([args, &exit_code] { exit_code = run(*args); });
}

} // namespace vtc::cli
