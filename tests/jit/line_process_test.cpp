// LineProcess: a program spoken to a line at a time (the peers of `vtc bench`): lines go both
// ways in order, the program's end is seen as the end of its lines and a failed write, its
// stderr lands in the file given, and a program that does not exist reports why.
#include "jit/line_process.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

namespace vtc::jit {
namespace {

std::string stderr_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("vtc-line-process-" + name)).string();
}

TEST(LineProcess, AnswersEachLineInOrder) {
  LineProcess p({"sh", "-c", "echo ready; while read l; do echo \"got $l\"; done"},
                stderr_file("echo"));
  ASSERT_EQ(p.start_error(), 0);
  EXPECT_EQ(p.receive(), "ready");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(p.send("line " + std::to_string(i)));
    EXPECT_EQ(p.receive(), "got line " + std::to_string(i));
  }
  const ProcessResult r = p.finish();
  EXPECT_TRUE(r.ok()) << r.describe_status();
}

TEST(LineProcess, SeesTheProgramEndAndKeepsItsStderr) {
  const std::string err = stderr_file("end");
  LineProcess p({"sh", "-c", "echo one; echo oops >&2; exit 3"}, err);
  EXPECT_EQ(p.receive(), "one");
  EXPECT_EQ(p.receive(), std::nullopt);
  // Writing to a program that has exited fails instead of raising SIGPIPE.
  bool sent = true;
  for (int i = 0; i < 1000 && sent; ++i)
    sent = p.send(std::string(4096, 'x'));
  EXPECT_FALSE(sent);
  EXPECT_EQ(p.finish().exit_code, 3);
  std::ifstream in(err);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "oops");
}

TEST(LineProcess, ReportsAProgramThatDoesNotExist) {
  LineProcess p({"/nonexistent/program"}, stderr_file("missing"));
  EXPECT_EQ(p.start_error(), ENOENT);
  EXPECT_FALSE(p.send("hello"));
  EXPECT_EQ(p.receive(), std::nullopt);
  EXPECT_EQ(p.finish().describe_status(), "could not start: No such file or directory");
}

} // namespace
} // namespace vtc::jit
