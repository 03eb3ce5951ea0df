// A program kept running beside vtc and spoken to a line at a time: `vtc bench` asks its peers
// (onnxruntime and OpenVINO in a python3 process each) for blocks of timed runs between its
// own, so that load on the host falls on every system alike. The program's stdin and stdout are
// one Unix socket (written with MSG_NOSIGNAL: a program that died gives an error, not
// SIGPIPE); its stderr goes to a file, kept for error messages.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "jit/process.h"

namespace vtc::jit {

class LineProcess {
public:
  // Starts argv[0] (searched on $PATH when it has no '/'), its stderr written to `stderr_file`.
  // Never throws for a program that cannot start: start_error() says why.
  LineProcess(const std::vector<std::string>& argv, const std::string& stderr_file);
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // 0 when the program started, else the errno of the failed start.
  int start_error() const { return start_error_; }
  // The program's process id (0 where it did not start).
  pid_t pid() const { return pid_; }
  // Writes `line` and a newline to the program's stdin; false when it no longer reads.
  bool send(const std::string& line);
  // The next line the program wrote to stdout (without its newline); nullopt at its end.
  std::optional<std::string> receive();
  // Closes the program's stdin and waits for it to exit: its status (output stays empty).
  ProcessResult finish();

private:
  int fd_ = -1;
  pid_t pid_ = 0;
  int start_error_ = 0;
  std::string buffered_; // read from the socket, not yet returned as a line
  bool finished_ = false;
  ProcessResult result_;
};

} // namespace vtc::jit
