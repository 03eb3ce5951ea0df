// The `vtc` command: parses the subcommand and turns every error into a one-line reason on
// stderr and a non-zero exit status.
#include <cstdio>
#include <exception>

#include "commands.h"
#include "vtc/error.h"

int main(int argc, char** argv) {
  CLI::App app{"vtc: compiles ONNX models into kernels that read and write through virtual "
               "tensors instead of running data-movement copies"};
  app.require_subcommand(1);
  int exit_code = 0;
  vtc::cli::add_run_command(app, exit_code);
  vtc::cli::add_info_command(app, exit_code);
  vtc::cli::add_conformance_command(app, exit_code);
  vtc::cli::add_bench_command(app, exit_code);
  vtc::cli::add_check_command(app, exit_code);
  vtc::cli::add_opt_command(app, exit_code);
  vtc::cli::add_explain_command(app, exit_code);
  vtc::cli::add_compile_command(app, exit_code);
  vtc::cli::add_prebuild_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const vtc::Error& e) {
    std::fprintf(stderr, "vtc: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vtc: error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
