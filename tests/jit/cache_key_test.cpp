// Cache keys: what changes them (source, flags, the sanitizers, any transitively included
// kernel header) and what does not (system headers, the checkout's location); the compiler
// identity; the environment-derived defaults.
#include "jit/cache_key.h"

#include <chrono>
#include <cstdlib>
#include <optional>

#include "jit_test_util.h"
#include "vtc/error.h"

namespace vtc::jit {
namespace {

class CacheKey : public testing::ScratchDirTest {
protected:
  // A kernel directory where a.h includes "sub/b.h" (relative to itself) and <c.h>.
  void write_kernels(const std::filesystem::path& root) {
    testing::write_file(root / "a.h", "#pragma once\n#include \"sub/b.h\"\n  #  include <c.h>\n"
                                      "#include <vector>\n");
    testing::write_file(root / "sub/b.h", "#pragma once\n#include \"../c.h\"\nint b();\n");
    testing::write_file(root / "c.h", "#pragma once\nint c();\n");
  }
};

const char* kSource = "#include \"a.h\"\n#include <cstdint>\nextern \"C\" int f() { return 1; }\n";

TEST_F(CacheKey, IncludedHeadersAreTransitiveUniqueAndSkipSystemHeaders) {
  write_kernels(dir_ / "k");
  std::vector<std::string> headers = included_headers(kSource, {(dir_ / "k").string()});
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(std::filesystem::path(headers[0]).filename(), "a.h");
  EXPECT_EQ(std::filesystem::path(headers[1]).filename(), "b.h");
  EXPECT_EQ(std::filesystem::path(headers[2]).filename(), "c.h");
  EXPECT_TRUE(included_headers("#include <vector>\n", {(dir_ / "k").string()}).empty());
}

TEST_F(CacheKey, StableForEqualInputs) {
  write_kernels(dir_ / "k");
  CompileOptions o = options();
  o.include_dirs = {(dir_ / "k").string()};
  std::string key = cache_key(kSource, o);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(cache_key(kSource, o), key);
  // The same kernels in another directory (another checkout) give the same key.
  write_kernels(dir_ / "elsewhere");
  o.include_dirs = {(dir_ / "elsewhere").string()};
  EXPECT_EQ(cache_key(kSource, o), key);
}

TEST_F(CacheKey, ChangesWithSourceFlagsAndEveryIncludedHeader) {
  write_kernels(dir_ / "k");
  CompileOptions o = options();
  o.include_dirs = {(dir_ / "k").string()};
  std::string key = cache_key(kSource, o);

  EXPECT_NE(cache_key(std::string(kSource) + "\n", o), key);

  CompileOptions flagged = o;
  flagged.flags.push_back("-DVTC_X=1");
  EXPECT_NE(cache_key(kSource, flagged), key);
  // Flags are separate words: {"-O3", "-g"} differs from {"-O3 -g"}.
  CompileOptions a = o, b = o;
  a.flags = {"-O3", "-g"};
  b.flags = {"-O3 -g"};
  EXPECT_NE(cache_key(kSource, a), cache_key(kSource, b));
  CompileOptions linked = o;
  linked.libraries = {"openblas"};
  EXPECT_NE(cache_key(kSource, linked), key);
  // Sanitized code is another object: its key differs, and is the key of the same flags
  // spelled out.
  CompileOptions plain = o, sanitized = o, spelled = o;
  plain.sanitize = false;
  sanitized.sanitize = true;
  spelled.sanitize = false;
  spelled.flags = effective_flags(sanitized);
  EXPECT_NE(cache_key(kSource, sanitized), cache_key(kSource, plain));
  EXPECT_EQ(cache_key(kSource, sanitized), cache_key(kSource, spelled));

  // Editing the deepest header (reached only through a.h and sub/b.h) changes the key.
  testing::write_file(dir_ / "k/c.h", "#pragma once\nint c(); // edited\n");
  std::string after_c = cache_key(kSource, o);
  EXPECT_NE(after_c, key);
  testing::write_file(dir_ / "k/sub/b.h", "#pragma once\n#include \"../c.h\"\nint b(int);\n");
  EXPECT_NE(cache_key(kSource, o), after_c);
}

// Headers are read once a process and again when their size or time of writing changes: an
// edit that keeps the size (stamped a second later, as a later save would be) changes the key.
TEST_F(CacheKey, SameSizeEditOfAHeaderChangesTheKey) {
  write_kernels(dir_ / "k");
  CompileOptions o = options();
  o.include_dirs = {(dir_ / "k").string()};
  const std::string key = cache_key(kSource, o);
  EXPECT_EQ(cache_key(kSource, o), key);
  const std::filesystem::path c = dir_ / "k/c.h";
  const auto written = std::filesystem::last_write_time(c);
  testing::write_file(c, "#pragma once\nint d();\n");
  std::filesystem::last_write_time(c, written + std::chrono::seconds(1));
  EXPECT_NE(cache_key(kSource, o), key);
}

TEST_F(CacheKey, HeaderOutsideIncludeDirsIsNotHashed) {
  write_kernels(dir_ / "k");
  CompileOptions o = options();
  o.include_dirs = {(dir_ / "k").string()};
  std::string key = cache_key("#include <vector>\nint g();\n", o);
  testing::write_file(dir_ / "k/c.h", "#pragma once\nint c(); // edited\n");
  EXPECT_EQ(cache_key("#include <vector>\nint g();\n", o), key);
}

TEST(CompilerIdentity, IsTheVersionOutput) {
  std::string identity = compiler_identity(default_compiler());
  EXPECT_FALSE(identity.empty());
  EXPECT_EQ(compiler_identity(default_compiler()), identity);
}

TEST(CompilerIdentity, MissingCompilerIsNamed) {
  try {
    compiler_identity("vtc-no-such-compiler-7f3a");
    FAIL() << "expected vtc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vtc-no-such-compiler-7f3a"), std::string::npos)
        << e.what();
  }
}

TEST(HostCpuIdentity, NamesTheCpuWithoutVolatileFields) {
  if (!std::filesystem::exists("/proc/cpuinfo")) GTEST_SKIP() << "no /proc/cpuinfo";
  std::string identity = host_cpu_identity();
  EXPECT_FALSE(identity.empty());
  EXPECT_EQ(identity.find("MHz"), std::string::npos) << identity;
  EXPECT_EQ(identity.find("bogomips"), std::string::npos) << identity;
  EXPECT_EQ(identity.find("processor"), std::string::npos) << identity;
}

TEST(SplitCommand, SplitsOnWhitespace) {
  EXPECT_EQ(split_command("  ccache   g++\t-x "),
            (std::vector<std::string>{"ccache", "g++", "-x"}));
  EXPECT_TRUE(split_command("   ").empty());
}

// Sets an environment variable for one scope and restores it afterwards.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CompileDefaults, ComeFromTheEnvironment) {
  {
    ScopedEnv cxx("CXX", "my-cxx");
    EXPECT_EQ(default_compiler(), "my-cxx");
    EXPECT_EQ(CompileOptions().compiler, "my-cxx");
  }
  {
    ScopedEnv cxx("CXX", nullptr);
    EXPECT_EQ(default_compiler(), "c++");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(default_cache_dir(), "/x/cache/vtc");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/ignored");
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(default_cache_dir(), "/home/u/.cache/vtc");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    std::string dir = default_cache_dir();
    EXPECT_NE(dir.find("vtc-cache-"), std::string::npos) << dir;
  }
  {
    ScopedEnv sanitize("VTC_SANITIZE", "1");
    EXPECT_TRUE(CompileOptions().sanitize);
  }
  for (const char* off : {"0", "", static_cast<const char*>(nullptr)}) {
    ScopedEnv sanitize("VTC_SANITIZE", off);
    EXPECT_FALSE(CompileOptions().sanitize) << (off ? off : "unset");
  }
  std::vector<std::string> expected = {"-O3",
                                       "-march=native",
                                       "-ffp-contract=off",
                                       "-fno-math-errno",
                                       "-fno-trapping-math",
                                       "-fno-tree-slp-vectorize",
                                       "-fopenmp",
                                       "-std=c++20",
                                       "-shared",
                                       "-fPIC"};
#if defined(__x86_64__)
  expected.insert(expected.begin() + 2, "-mprefer-vector-width=512");
#endif
  EXPECT_EQ(default_compile_flags(), expected);
}

} // namespace
} // namespace vtc::jit
