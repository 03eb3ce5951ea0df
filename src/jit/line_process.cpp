// LineProcess with posix_spawnp over one socketpair: the child's stdin and stdout are its end,
// so one read side and one write side serve both directions and a dead child turns a write
// into EPIPE (send with MSG_NOSIGNAL) rather than a signal.
#include "jit/line_process.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vtc/error.h"

extern char** environ;

namespace vtc::jit {

LineProcess::LineProcess(const std::vector<std::string>& argv, const std::string& stderr_file) {
  VTC_CHECK(!argv.empty() && !argv[0].empty()) << "LineProcess: no program given";
  int fds[2];
  VTC_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0)
      << "LineProcess: cannot create a socket pair for '" << argv[0]
      << "': " << std::strerror(errno);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    start_error_ = rc;
    result_.start_error = rc;
    finished_ = true;
    return;
  }
  fd_ = fds[0];
}

LineProcess::~LineProcess() {
  finish();
}

bool LineProcess::send(const std::string& line) {
  if (fd_ < 0) return false;
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(fd_, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

std::optional<std::string> LineProcess::receive() {
  for (;;) {
    const size_t end = buffered_.find('\n');
    if (end != std::string::npos) {
      std::string line = buffered_.substr(0, end);
      buffered_.erase(0, end + 1);
      return line;
    }
    if (fd_ < 0) return std::nullopt;
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffered_.append(chunk, size_t(n));
  }
}

ProcessResult LineProcess::finish() {
  if (finished_) return result_;
  finished_ = true;
  shutdown(fd_, SHUT_WR); // the program reads the end of its stdin
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) break;
  }
  close(fd_);
  fd_ = -1;
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result_.signal = WTERMSIG(status);
  return result_;
}

} // namespace vtc::jit
