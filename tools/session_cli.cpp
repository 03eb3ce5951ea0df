// Shared pieces of the Session-based commands (see session_cli.h).
#include "session_cli.h"

#include <algorithm>
#include <fmt/core.h>
#include <map>

#include "frontend/tensor_io.h"
#include "lower/program.h"
#include "ref/random_inputs.h"

namespace vtc::cli {

CLI::Option* add_target_option(CLI::App* cmd, TargetKind& target, const std::string& help) {
  const std::map<std::string, TargetKind> names{
      {"cpu", TargetKind::cpu}, {"ref", TargetKind::ref}, {"cuda", TargetKind::cuda}};
  return cmd->add_option("--target", target, help)
      ->transform(CLI::CheckedTransformer(names).description(""))
      ->type_name("cpu|cuda|ref")
      ->default_str(target_kind_name(target));
}

CLI::Option* add_strategy_option(CLI::App* cmd, StrategyKind& strategy, const std::string& help) {
  const std::map<std::string, StrategyKind> names{{"none", StrategyKind::none},
                                                  {"type1", StrategyKind::type1},
                                                  {"all-type-1", StrategyKind::type1},
                                                  {"greedy", StrategyKind::greedy}};
  return cmd->add_option("--strategy", strategy, help)
      ->transform(CLI::CheckedTransformer(names).description(""))
      ->type_name("none|type1|greedy")
      ->default_str(strategy_kind_name(strategy));
}

CLI::Option* add_library_option(CLI::App* cmd, LibraryMode& library) {
  const std::map<std::string, LibraryMode> names{{"auto", LibraryMode::automatic},
                                                 {"never", LibraryMode::never},
                                                 {"always", LibraryMode::always}};
  return cmd
      ->add_option("--library", library,
                   "matrix products and convolutions on a library (cpu: OpenBLAS for f32 "
                   "products; cuda: cuDNN and cuBLASLt for convolutions): auto (where faster), "
                   "never or always")
      ->transform(CLI::CheckedTransformer(names).description(""))
      ->type_name("auto|never|always")
      ->default_str(library_mode_name(library));
}

namespace {

// NAME and VALUE of a repeatable flag's NAME=VALUE argument `b`; an error naming `flag` and
// the `form` expected when either side is empty.
std::pair<std::string, std::string> split_binding(const std::string& b, const char* flag,
                                                  const char* form) {
  const size_t eq = b.find('=');
  VTC_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < b.size())
      << flag << " '" << b << "' is not of the form " << form;
  return {b.substr(0, eq), b.substr(eq + 1)};
}

} // namespace

CLI::Option* add_dims_option(CLI::App* cmd, std::map<std::string, int64_t>& dims) {
  return cmd
      ->add_option_function<std::vector<std::string>>(
          "--dim",
          [&dims](const std::vector<std::string>& bindings) {
            for (const std::string& b : bindings) {
              const auto [name, size] = split_binding(b, "--dim", "NAME=SIZE");
              size_t used = 0;
              int64_t v = -1;
              try {
                v = std::stoll(size, &used);
              } catch (const std::exception&) {
                used = 0;
              }
              VTC_CHECK(used == size.size() && v >= 0)
                  << "--dim '" << b << "': the size must be a non-negative integer";
              dims[name] = v;
            }
          },
          "NAME=SIZE: the size of a symbolic input dimension (repeatable)")
      ->type_name("NAME=SIZE");
}

CLI::Option* add_library_node_option(CLI::App* cmd, std::map<std::string, LibraryMode>& nodes) {
  return cmd
      ->add_option_function<std::vector<std::string>>(
          "--library-node",
          [&nodes](const std::vector<std::string>& bindings) {
            for (const std::string& b : bindings) {
              const auto [node, name] =
                  split_binding(b, "--library-node", "NODE=auto|never|always");
              const std::optional<LibraryMode> mode = parse_library_mode(name);
              VTC_CHECK(mode) << "--library-node '" << b
                              << "': the mode must be auto, never or always";
              nodes[node] = *mode;
            }
          },
          "NODE=MODE: the library mode of the kernel built around node NODE (a Conv or "
          "MatMul), overriding --library (repeatable)")
      ->type_name("NODE=MODE");
}

void add_session_flags(CLI::App* cmd, Options& options, bool strategy) {
  add_dims_option(cmd, options.dims);
  if (strategy)
    add_strategy_option(cmd, options.strategy,
                        "which tensors become virtual: none, type1 or greedy");
  add_library_option(cmd, options.library);
  add_library_node_option(cmd, options.library_nodes);
  cmd->add_option("--cache-dir", options.cache_dir,
                  "where compiled models are cached (default: $XDG_CACHE_HOME/vtc)");
  cmd->add_option("--threads", options.threads, "kernel threads (0: all cores)")
      ->capture_default_str();
  cmd->add_option("--donate", options.donate,
                  "a graph input the program may update in place (repeatable)");
  cmd->add_flag("--verbose,-v", options.verbose, "report lowering and compilation on stderr");
  options.progress = true;
  cmd->add_flag_function(
      "--quiet,-q", [&options](int64_t) { options.progress = false; },
      "no progress line on stderr while compiling");
  cmd->add_flag_function(
      "--no-profile", [&options](int64_t) { options.profile = false; },
      "cuda: keep the greedy plan and the library rule's choices without timing "
      "alternatives on the device (vtc's kernels for library nodes, all-physical)");
  cmd->add_flag("--sanitize", options.sanitize,
                "cpu: generated code under AddressSanitizer and UBSan, each buffer allocated on "
                "its own (needs the ASan runtime preloaded: README)");
}

HostTensorMap model_inputs(const std::vector<TensorSpec>& specs,
                           const std::vector<std::string>& bindings, uint64_t seed) {
  std::map<std::string, std::string> files;
  for (const std::string& a : bindings) {
    auto eq = a.find('=');
    VTC_CHECK(eq != std::string::npos && eq > 0)
        << "--input '" << a << "' is not of the form NAME=FILE";
    files[a.substr(0, eq)] = a.substr(eq + 1);
  }
  HostTensorMap inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& in = specs[i];
    auto it = files.find(in.name);
    if (it == files.end()) {
      fmt::print(stderr, "input '{}' not given: using seeded random values ({}, seed {})\n",
                 in.name, type_str(in.type), seed + i);
      inputs[in.name] = random_tensor(in.type, seed + i);
      continue;
    }
    Tensor t = read_tensor_file(it->second, in.type.dtype);
    VTC_CHECK(t.type() == in.type)
        << "input '" << in.name << "' from " << it->second << " is " << type_str(t.type())
        << ", the model expects " << type_str(in.type);
    inputs[in.name] = std::move(t);
    files.erase(it);
  }
  for (const auto& [name, file] : files)
    VTC_FAIL() << "--input " << name << "=" << file << ": the model has no input '" << name << "'";
  return inputs;
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

std::string file_name_for(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return s;
}

ProgramCounts count_steps(const Session& s) {
  ProgramCounts c;
  if (!s.has_program()) return c;
  for (const StepInfo& step : s.program().steps) {
    ++c.steps;
    c.copies += step.is_copy;
    c.interpreted += !step.fallback.empty();
  }
  return c;
}

void print_profiled(std::FILE* to, const std::string& what, const ProfiledPlan& p) {
  fmt::print(to, "{}: profiled on the device: greedy plan {:.4f} ms", what, p.greedy_ms);
  if (p.vtc_kernels_ms > 0) fmt::print(to, ", on vtc's kernels {:.4f} ms", p.vtc_kernels_ms);
  if (p.per_node_ms > 0) fmt::print(to, ", per node {:.4f} ms", p.per_node_ms);
  if (p.physical_ms > 0) fmt::print(to, ", all-physical {:.4f} ms", p.physical_ms);
  fmt::print(to, ", kept {}{}\n", p.kept,
             p.from_cache ? " (the choice of an earlier session, from the cache)" : "");
  if (p.nodes.empty()) return;
  int kept_library = 0;
  for (const ProfiledNode& n : p.nodes)
    kept_library += n.on_library;
  fmt::print(to, "{}: {} of {} library nodes kept on the library (ms: library, vtc's kernel):\n",
             what, kept_library, p.nodes.size());
  for (const ProfiledNode& n : p.nodes)
    fmt::print(to, "  {:<9} {:8.4f} {:8.4f}  {:>+6.1f} %  {} {}\n", n.library, n.library_ms,
               n.vtc_ms, n.library_ms > 0 ? 100.0 * (n.vtc_ms - n.library_ms) / n.library_ms : 0.0,
               n.on_library ? "library" : "vtc    ", n.node);
}

} // namespace vtc::cli
