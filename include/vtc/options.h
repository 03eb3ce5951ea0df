// vtc::Options, the one options struct the CLI and the C++ API both fill, and the enums it
// is made of: the target a model is compiled for, the strategy choosing which tensors become
// virtual, and when matrix products go to a library. Each enum has its CLI spelling
// (name / parse).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vtc {

enum class TargetKind {
  cpu,  // C++ generated per model, compiled by the system compiler into a shared object
  ref,  // the reference interpreter: the oracle every compiled target is checked against
  cuda, // CUDA C++ generated per model, compiled by NVRTC, run on an NVIDIA GPU
};

enum class StrategyKind {
  none,   // every tensor physical: the baseline that differs only in data movement
  type1,  // every always-profitable (Type I) virtual tensor
  greedy, // the global greedy over the cost model, holding peak memory at or below none's
};

enum class LibraryMode {
  automatic, // where the library is measured faster (gemm_library_rule)
  never,
  always, // wherever the library can
};

inline const char* target_kind_name(TargetKind t) {
  switch (t) {
  case TargetKind::cpu:
    return "cpu";
  case TargetKind::ref:
    return "ref";
  case TargetKind::cuda:
    return "cuda";
  }
  return "?";
}
inline std::optional<TargetKind> parse_target_kind(std::string_view s) {
  if (s == "cpu") return TargetKind::cpu;
  if (s == "ref") return TargetKind::ref;
  if (s == "cuda") return TargetKind::cuda;
  return std::nullopt;
}

inline const char* strategy_kind_name(StrategyKind k) {
  switch (k) {
  case StrategyKind::none:
    return "none";
  case StrategyKind::type1:
    return "type1";
  case StrategyKind::greedy:
    return "greedy";
  }
  return "?";
}
// "none", "type1" (also "all-type-1"), "greedy"; nullopt otherwise.
inline std::optional<StrategyKind> parse_strategy_kind(std::string_view s) {
  if (s == "none") return StrategyKind::none;
  if (s == "type1" || s == "all-type-1") return StrategyKind::type1;
  if (s == "greedy") return StrategyKind::greedy;
  return std::nullopt;
}

inline const char* library_mode_name(LibraryMode m) {
  switch (m) {
  case LibraryMode::automatic:
    return "auto";
  case LibraryMode::never:
    return "never";
  case LibraryMode::always:
    return "always";
  }
  return "?";
}
inline std::optional<LibraryMode> parse_library_mode(std::string_view s) {
  if (s == "auto") return LibraryMode::automatic;
  if (s == "never") return LibraryMode::never;
  if (s == "always") return LibraryMode::always;
  return std::nullopt;
}

struct Options {
  TargetKind target = TargetKind::cpu;
  StrategyKind strategy = StrategyKind::greedy; // which tensors go virtual
  std::vector<std::string> donate; // graph inputs whose buffers the program may overwrite
  // Sizes of symbolic input dimensions by name ({"batch", 1}, {"seq", 16}): a model exported
  // with dynamic axes is compiled for that shape.
  std::map<std::string, int64_t> dims;
  std::string cache_dir;  // compiled-kernel cache; empty: the JIT's default
  std::string source_dir; // tree holding kernels/; empty: the one vtc was built from
  bool verbose = false;   // progress of lowering and compiling on stderr
  // One updating line on stderr while importing, choosing the strategy and compiling, when
  // stderr is a terminal (the command-line tool's default; --quiet turns it off).
  bool progress = false;
  int threads = 0; // threads for kernels; 0: the OpenMP default (all cores)
  // f32 matrix products on a library (OpenBLAS on cpu) instead of vtc's template; their
  // operands then stay physical.
  LibraryMode library = LibraryMode::automatic;
  // Per node, by name (the Conv or MatMul a kernel is built around): a library mode that
  // overrides `library` for that node's kernel. The profiled choice on cuda sets it to the
  // faster of the library and vtc's kernel for each node (Session::profiled_plan).
  std::map<std::string, LibraryMode> library_nodes;
  // cuda: time every step with CUDA events, launching steps one by one, instead of replaying
  // the program as CUDA graphs (Session::last_step_times; cpu always times its steps).
  bool time_steps = false;
  // cuda, strategy greedy: the greedy program is timed on the device against the all-physical
  // one, and the faster is kept (Session::profiled_plan); both compute the same bits.
  bool profile = true;
  // cpu: generated code built with AddressSanitizer and UBSan, each buffer allocated on its own
  // so that an out-of-bounds access through a mapping is reported, not absorbed by a
  // neighbouring buffer. The process must have the ASan runtime loaded (README, "Under the
  // sanitizers"); $VTC_SANITIZE=1 turns it on too.
  bool sanitize = false;
};

} // namespace vtc
