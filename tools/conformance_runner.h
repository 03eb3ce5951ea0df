// Runs ONNX operator test cases (a folder holding model.onnx and test_data_set_*/ with
// input_*.pb and output_*.pb) through a vtc target, each case in a child process with a time
// limit, so that a crash or a hang is reported as that case's failure, never the run's.
#pragma once

#include <string>
#include <vector>

namespace vtc {

enum class CaseStatus { passed, failed, unsupported };

struct CaseResult {
  std::string name;           // the case folder's name, e.g. "test_reshape_reduced_dims"
  std::string op;             // the op of a single-node case, or "(N ops)" for a multi-node one
  bool data_movement = false; // every op of the case is a data-movement op
  CaseStatus status = CaseStatus::failed;
  std::string reason; // why it failed or is unsupported
};

struct ConformanceOptions {
  std::string target = "ref"; // "ref", or "cpu": every strategy, outputs bitwise identical
  double timeout_seconds = 60;
  std::string cache_dir; // compiled-kernel cache for target cpu (empty: the default)
  // Target cuda without a GPU: every strategy's translation unit generated and compiled by
  // NVRTC (not optimised), nothing run; a case passes when every unit compiles.
  bool compile_only = false;
  // Target cpu: generated code under AddressSanitizer and UBSan (Options::sanitize).
  bool sanitize = false;
  // Compiled targets: a case whose program leaves any step to the reference interpreter fails.
  bool compiled_only = false;
};

// Runs one case folder (in the calling process: no isolation).
CaseResult run_conformance_case(const std::string& dir, const ConformanceOptions& options);
// Runs one case folder in a child process; crashes and time-outs become failures.
CaseResult run_conformance_case_isolated(const std::string& dir, const ConformanceOptions& options);
// Case folders under `root` whose names match `filter` (ECMAScript regex), sorted.
std::vector<std::string> list_conformance_cases(const std::string& root, const std::string& filter);

const char* status_name(CaseStatus s);

} // namespace vtc
