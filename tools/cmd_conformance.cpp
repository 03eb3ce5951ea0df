// `vtc conformance [DIR]`: runs ONNX's operator test cases through a target, prints a table
// per op and the line `conformance: P passed, F failed, U unsupported`. With --expect FILE it
// also checks the run: every failure must be a known one listed in FILE (with its reason),
// at least 90% of the supported cases must pass, and nothing may crash or hang.
#include <algorithm>
#include <atomic>
#include <fmt/core.h>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "commands.h"
#include "conformance_runner.h"
#include "ops/op_registry.h"
#include "vtc/error.h"

namespace vtc::cli {

namespace {

struct ConformanceArgs {
  std::string dir = "/usr/share/libonnx-testdata/data/node";
  std::string target = "ref";
  std::string filter;
  std::string expect_file;
  int jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  double timeout = 60;
  bool verbose = false;
  std::string cache_dir;
  bool compile_only = false;
  bool sanitize = false;
  bool compiled_only = false;
};

// Known failures: one case name per line, '#' starts the reason.
std::set<std::string> read_expected_failures(const std::string& path) {
  std::ifstream f(path);
  VTC_CHECK(f) << path << ": cannot open the expected-failures file";
  std::set<std::string> names;
  std::string line;
  while (std::getline(f, line)) {
    std::string name = line.substr(0, line.find('#'));
    name.erase(name.find_last_not_of(" \t\r") + 1);
    name.erase(0, name.find_first_not_of(" \t"));
    if (!name.empty()) names.insert(name);
  }
  return names;
}

std::string shorten(const std::string& s, size_t n = 400) {
  std::string one = s;
  std::replace(one.begin(), one.end(), '\n', ' ');
  return one.size() > n ? one.substr(0, n) + "..." : one;
}

std::vector<CaseResult> run_all(const std::vector<std::string>& dirs,
                                const ConformanceOptions& options, int jobs) {
  std::vector<CaseResult> results(dirs.size());
  std::atomic<size_t> next{0}, done{0};
  std::mutex print_mutex;
  all_ops(); // build the op table before any fork
  auto worker = [&] {
    for (size_t i; (i = next++) < dirs.size();) {
      results[i] = run_conformance_case_isolated(dirs[i], options);
      size_t d = ++done;
      if (d % 50 == 0 || d == dirs.size()) {
        std::lock_guard<std::mutex> lock(print_mutex);
        fmt::print(stderr, "  [{}/{}] cases run\n", d, dirs.size());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, jobs); ++j)
    threads.emplace_back(worker);
  for (auto& t : threads)
    t.join();
  return results;
}

void print_table(const std::vector<CaseResult>& results) {
  std::map<std::string, std::array<int, 3>> by_op;
  for (const CaseResult& r : results)
    ++by_op[r.op][size_t(r.status)];
  fmt::print("{:<28} {:>7} {:>7} {:>12}\n", "op", "passed", "failed", "unsupported");
  for (const auto& [op, c] : by_op)
    fmt::print("{:<28} {:>7} {:>7} {:>12}\n", op, c[0], c[1], c[2]);
}

int conformance(const ConformanceArgs& args) {
  std::vector<std::string> dirs = list_conformance_cases(args.dir, args.filter);
  fmt::print(stderr, "running {} cases from {} on target {} ({} at a time)\n", dirs.size(),
             args.dir, args.target, args.jobs);
  ConformanceOptions options{args.target,       args.timeout,  args.cache_dir,
                             args.compile_only, args.sanitize, args.compiled_only};
  std::vector<CaseResult> results = run_all(dirs, options, args.jobs);
  print_table(results);

  int passed = 0, failed = 0, unsupported = 0;
  for (const CaseResult& r : results) {
    passed += r.status == CaseStatus::passed;
    failed += r.status == CaseStatus::failed;
    unsupported += r.status == CaseStatus::unsupported;
  }
  fmt::print("\nfailed cases\n");
  for (const CaseResult& r : results)
    if (r.status == CaseStatus::failed)
      fmt::print("  {}{}: {}\n", r.name, r.data_movement ? " [data movement]" : "",
                 shorten(r.reason));
  fmt::print("\nunsupported data-movement cases\n");
  for (const CaseResult& r : results)
    if (r.status == CaseStatus::unsupported && r.data_movement)
      fmt::print("  {}: {}\n", r.name, shorten(r.reason));
  if (args.verbose) {
    fmt::print("\nall cases\n");
    for (const CaseResult& r : results)
      fmt::print("  {:<60} {:<11} {}\n", r.name, status_name(r.status), shorten(r.reason, 200));
  } else {
    std::map<std::string, int> reasons;
    for (const CaseResult& r : results)
      if (r.status == CaseStatus::unsupported && !r.data_movement) {
        std::string reason = r.reason;
        auto pos = reason.rfind(": ");
        ++reasons[shorten(pos == std::string::npos ? reason : reason.substr(pos + 2), 100)];
      }
    fmt::print("\nother unsupported cases, by reason (-v lists each)\n");
    for (const auto& [reason, c] : reasons)
      fmt::print("  {:>4}  {}\n", c, reason);
  }

  int status = 0;
  if (!args.expect_file.empty()) {
    std::set<std::string> expected = read_expected_failures(args.expect_file);
    fmt::print("\nchecks against {}\n", args.expect_file);
    for (const CaseResult& r : results) {
      bool hard = r.reason.rfind("crashed", 0) == 0 || r.reason.rfind("timed out", 0) == 0;
      if (r.status == CaseStatus::failed && (hard || !expected.count(r.name))) {
        fmt::print("  UNEXPECTED FAILURE {}: {}\n", r.name, shorten(r.reason));
        status = 1;
      }
      if (r.status != CaseStatus::failed && expected.count(r.name))
        fmt::print("  now {} (remove from the expected failures): {}\n", status_name(r.status),
                   r.name);
    }
    double rate = passed + failed ? double(passed) / double(passed + failed) : 1.0;
    fmt::print("  pass rate of supported cases: {:.1f}% (at least 90% required)\n", 100 * rate);
    if (rate < 0.9) status = 1;
  }
  fmt::print("conformance: {} passed, {} failed, {} unsupported\n", passed, failed, unsupported);
  return status;
}

} // namespace

void add_conformance_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ConformanceArgs>();
  CLI::App* cmd = app.add_subcommand("conformance", "Run ONNX's operator test cases");
  cmd->add_option("dir", args->dir, "folder of test cases (default: libonnx-testdata's node)");
  cmd->add_option("--target", args->target,
                  "target to run: ref, or cpu or cuda (every strategy; outputs must be bitwise "
                  "equal)");
  cmd->add_option("--cache-dir", args->cache_dir, "compiled-kernel cache for the compiled targets");
  cmd->add_flag("--compile-only", args->compile_only,
                "target cuda without a GPU: generate and compile every strategy's unit with "
                "NVRTC, run nothing");
  cmd->add_flag("--compiled-only", args->compiled_only,
                "compiled targets: a case fails when any step runs on the reference interpreter");
  cmd->add_flag("--sanitize", args->sanitize,
                "target cpu: generated code under AddressSanitizer and UBSan (needs the ASan "
                "runtime preloaded: README)");
  cmd->add_option("--filter", args->filter, "only cases whose folder name matches this regex");
  cmd->add_option("--expect", args->expect_file,
                  "known failures, one case a line with '# reason'; fail on any other failure "
                  "or a pass rate under 90%");
  cmd->add_option("--jobs,-j", args->jobs, "cases run at once");
  cmd->add_option("--timeout", args->timeout, "seconds per case before it counts as hung");
  cmd->add_flag("--verbose,-v", args->verbose, "list every case with its status");
  cmd->callback([args, &exit_code] { exit_code = conformance(*args); });
}

} // namespace vtc::cli
