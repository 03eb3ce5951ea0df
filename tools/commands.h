// Registration of the `vtc` subcommands; each lives in its own cmd_*.cpp file and returns
// its exit status through `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace vtc::cli {

void add_run_command(CLI::App& app, int& exit_code);
void add_info_command(CLI::App& app, int& exit_code);
void add_conformance_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_check_command(CLI::App& app, int& exit_code);
void add_opt_command(CLI::App& app, int& exit_code);
void add_explain_command(CLI::App& app, int& exit_code);
void add_compile_command(CLI::App& app, int& exit_code);
void add_prebuild_command(CLI::App& app, int& exit_code);

} // namespace vtc::cli
