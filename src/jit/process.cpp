// run_process with posix_spawnp: one pipe carries both stdout and stderr, so reading it to
// the end cannot deadlock on a full second pipe. glibc's posix_spawnp reports a failed exec
// (program not found, not executable) as its return value.
#include "jit/process.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vtc/error.h"

extern char** environ;

namespace vtc::jit {

std::string ProcessResult::describe_status() const {
  if (start_error != 0) return std::string("could not start: ") + std::strerror(start_error);
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit status " + std::to_string(exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  VTC_CHECK(!argv.empty() && !argv[0].empty()) << "run_process: no program given";
  ProcessResult result;
  int fds[2];
  VTC_CHECK(pipe2(fds, O_CLOEXEC) == 0)
      << "run_process: cannot create a pipe for '" << argv[0] << "': " << std::strerror(errno);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);

  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    result.start_error = rc;
    return result;
  }

  char chunk[4096];
  for (;;) {
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n > 0) {
      result.output.append(chunk, size_t(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    VTC_CHECK(errno == EINTR) << "run_process: waiting for '" << argv[0]
                              << "' failed: " << std::strerror(errno);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

} // namespace vtc::jit
