// What `vtc run`, `vtc bench` and `vtc check` share: the command-line flags that fill
// vtc::Options, model inputs from files or seeded random values, and short reports of a
// tensor and of a lowered program.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "vtc/vtc.h"

namespace vtc::cli {

// --dim NAME=SIZE (repeatable): sizes of symbolic input dimensions into `dims`.
CLI::Option* add_dims_option(CLI::App* cmd, std::map<std::string, int64_t>& dims);

// --dim, --library, --cache-dir, --threads, --donate, --verbose, --quiet, --sanitize (and
// --strategy when `strategy` is set).
void add_session_flags(CLI::App* cmd, Options& options, bool strategy);

// Options whose values are the enums of vtc/options.h, spelled as on the command line.
CLI::Option* add_target_option(CLI::App* cmd, TargetKind& target, const std::string& help);
CLI::Option* add_strategy_option(CLI::App* cmd, StrategyKind& strategy, const std::string& help);
CLI::Option* add_library_option(CLI::App* cmd, LibraryMode& library);
// The profiled choice of a greedy plan on the device, lines starting "WHAT: ": the plans'
// medians, what was kept, and each library node's time on the library and on vtc's kernel
// (the difference in percent) and which it runs on.
void print_profiled(std::FILE* to, const std::string& what, const ProfiledPlan& p);

// --library-node NODE=MODE (repeatable): Options::library_nodes.
CLI::Option* add_library_node_option(CLI::App* cmd, std::map<std::string, LibraryMode>& nodes);

// One tensor per model input: from "NAME=FILE" bindings (.npy or .pb), the rest seeded random
// values (input i gets seed + i, noted on stderr). Errors name the binding or the input.
HostTensorMap model_inputs(const std::vector<TensorSpec>& specs,
                           const std::vector<std::string>& bindings, uint64_t seed);

// "min -0.5 max 2 mean 0.1"
std::string summary(const Tensor& t);
// A file name for a tensor name (ONNX names may hold '/' or ':').
std::string file_name_for(const std::string& name);

struct ProgramCounts {
  int steps = 0, copies = 0, interpreted = 0;
};
ProgramCounts count_steps(const Session& s);

} // namespace vtc::cli
