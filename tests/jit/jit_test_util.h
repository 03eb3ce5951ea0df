// Helpers shared by the JIT tests: a scratch directory removed after each test, file
// writing, and compile options that point the cache into that directory.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "jit/compile_options.h"

namespace vtc::jit::testing {

class ScratchDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("vtc-jit-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Default options (the flags vtc uses), with the cache inside the scratch directory.
  CompileOptions options() const {
    CompileOptions o;
    o.cache_dir = (dir_ / "cache").string();
    return o;
  }

  std::filesystem::path dir_;
};

inline void write_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  ASSERT_TRUE(out.good()) << path;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

} // namespace vtc::jit::testing
