// Running an external program (the system C++ compiler) and collecting what it prints. The
// JIT needs exactly this: start a program found on $PATH with an argument vector (no shell,
// so paths with spaces or quotes are safe), wait for it, and keep its stdout and stderr
// together for error messages.
#pragma once

#include <string>
#include <vector>

namespace vtc::jit {

struct ProcessResult {
  // 0 when the program started; otherwise the errno of the failed start (ENOENT: not found).
  int start_error = 0;
  // The exit status when the program exited normally, else -1.
  int exit_code = -1;
  // The signal that ended the program, else 0.
  int signal = 0;
  // stdout and stderr, interleaved as the program wrote them.
  std::string output;

  bool ok() const { return start_error == 0 && exit_code == 0; }
  // "exit status 1", "killed by signal 9" or "could not start: No such file or directory".
  std::string describe_status() const;
};

// Runs argv[0] (searched on $PATH when it has no '/') with the given arguments and stdin
// from /dev/null, and waits for it. Never throws for a failing program: the caller decides
// what a failure means.
ProcessResult run_process(const std::vector<std::string>& argv);

} // namespace vtc::jit
