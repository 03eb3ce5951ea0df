// compile_object / compile_and_load / SharedLibrary end to end with the system compiler:
// compile and call, cache hits without a compiler run, invalidation, corrupt entries rebuilt,
// concurrent processes, and the error messages for every way it can fail.
#include "jit/host_compiler.h"

#include <sys/wait.h>
#include <unistd.h>

#include "jit/sha256.h"
#include "jit_test_util.h"
#include "vtc/error.h"

namespace vtc::jit {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::write_file;

const char* kAdd = "extern \"C\" int vtc_add(int a, int b) { return a + b; }\n";

// The message of the vtc::Error that `body` throws; fails the test when none is thrown.
template <typename Body> std::string error_of(Body body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected vtc::Error";
  return "";
}

int call_add(const SharedLibrary& lib, int a, int b) {
  return lib.symbol<int(int, int)>("vtc_add")(a, b);
}

// Files in the cache directory whose name contains ".tmp" (left-over temporaries).
int temporaries_in(const fs::path& dir) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    n += entry.path().filename().string().find(".tmp") != std::string::npos;
  return n;
}

class HostCompiler : public testing::ScratchDirTest {};

TEST_F(HostCompiler, CompilesLoadsAndCalls) {
  CompileOptions o = options();
  LoadedObject loaded = compile_and_load(kAdd, o);
  EXPECT_FALSE(loaded.object.cached);
  EXPECT_EQ(call_add(loaded.library, 2, 40), 42);
  EXPECT_EQ(loaded.object.so_path, (fs::path(o.cache_dir) / (loaded.object.key + ".so")).string());
  EXPECT_EQ(read_file(loaded.object.source_path), kAdd);
  std::string ok = read_file(fs::path(o.cache_dir) / (loaded.object.key + ".ok"));
  EXPECT_EQ(ok.substr(0, 64), *sha256_file_hex(loaded.object.so_path));
  EXPECT_EQ(temporaries_in(o.cache_dir), 0);
}

TEST_F(HostCompiler, SecondCompileHitsTheCache) {
  CompileOptions o = options();
  CompiledObject first = compile_object(kAdd, o);
  ASSERT_FALSE(first.cached);
  EXPECT_GT(first.seconds, 0);
  CompiledObject second = compile_object(kAdd, o);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.seconds, 0);
  EXPECT_EQ(second.so_path, first.so_path);
  EXPECT_EQ(compile_shared_object(kAdd, o), first.so_path);
  SharedLibrary lib(second.so_path);
  EXPECT_EQ(call_add(lib, 1, 2), 3);
}

TEST_F(HostCompiler, ChangedSourceGetsANewEntry) {
  CompileOptions o = options();
  CompiledObject add = compile_object(kAdd, o);
  CompiledObject sub =
      compile_object("extern \"C\" int vtc_add(int a, int b) { return a - b; }\n", o);
  EXPECT_FALSE(sub.cached);
  EXPECT_NE(sub.key, add.key);
  SharedLibrary lib_add(add.so_path), lib_sub(sub.so_path);
  EXPECT_EQ(call_add(lib_add, 5, 3), 8);
  EXPECT_EQ(call_add(lib_sub, 5, 3), 2);
}

TEST_F(HostCompiler, EditedKernelHeaderRecompiles) {
  CompileOptions o = options();
  o.include_dirs = {(dir_ / "kernels").string()};
  write_file(dir_ / "kernels/value.h", "#pragma once\nconstexpr int kValue = 1;\n");
  const char* source = "#include \"value.h\"\nextern \"C\" int value() { return kValue; }\n";
  {
    LoadedObject loaded = compile_and_load(source, o);
    EXPECT_EQ(loaded.library.symbol<int()>("value")(), 1);
  }
  write_file(dir_ / "kernels/value.h", "#pragma once\nconstexpr int kValue = 2;\n");
  LoadedObject loaded = compile_and_load(source, o);
  EXPECT_FALSE(loaded.object.cached);
  EXPECT_EQ(loaded.library.symbol<int()>("value")(), 2);
}

TEST_F(HostCompiler, CorruptEntriesAreRebuilt) {
  CompileOptions o = options();
  CompiledObject entry = compile_object(kAdd, o);
  fs::path so = entry.so_path;
  fs::path ok = fs::path(o.cache_dir) / (entry.key + ".ok");
  std::string good_so = read_file(so);

  // A truncated shared object.
  fs::resize_file(so, fs::file_size(so) / 2);
  EXPECT_FALSE(compile_object(kAdd, o).cached);
  EXPECT_EQ(read_file(so), good_so);

  // A digest that does not match.
  write_file(ok, std::string(64, '0') + "\n");
  EXPECT_FALSE(compile_object(kAdd, o).cached);
  EXPECT_TRUE(compile_object(kAdd, o).cached);

  // A missing digest (a compile interrupted between the .so and the .ok).
  fs::remove(ok);
  EXPECT_FALSE(compile_object(kAdd, o).cached);

  // A missing shared object.
  fs::remove(so);
  EXPECT_FALSE(compile_object(kAdd, o).cached);

  SharedLibrary lib(compile_shared_object(kAdd, o));
  EXPECT_EQ(call_add(lib, 20, 22), 42);
}

TEST_F(HostCompiler, CachedObjectThatFailsToLoadIsRebuilt) {
  CompileOptions o = options();
  CompiledObject entry = compile_object(kAdd, o);
  // Garbage whose digest is recorded: the entry looks valid until dlopen refuses it.
  write_file(entry.so_path, "not an ELF file");
  write_file(fs::path(o.cache_dir) / (entry.key + ".ok"), *sha256_file_hex(entry.so_path) + "\n");
  ASSERT_TRUE(compile_object(kAdd, o).cached);
  EXPECT_NE(error_of([&] { SharedLibrary lib(entry.so_path); }).find(entry.so_path),
            std::string::npos);

  LoadedObject loaded = compile_and_load(kAdd, o);
  EXPECT_FALSE(loaded.object.cached);
  EXPECT_EQ(call_add(loaded.library, 4, 5), 9);
}

TEST_F(HostCompiler, ConcurrentProcessesCompilingTheSameSourceAllSucceed) {
  CompileOptions o = options();
  // Distinct from every other test's source so that each child really compiles.
  const char* source = "extern \"C\" int vtc_add(int a, int b) { return a + b + 100; }\n";
  constexpr int kChildren = 3;
  std::vector<pid_t> children;
  for (int i = 0; i < kChildren; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 1;
      try {
        LoadedObject loaded = compile_and_load(source, o);
        code = call_add(loaded.library, 1, 2) == 103 ? 0 : 2;
      } catch (const std::exception& e) {
        fprintf(stderr, "child %d: %s\n", i, e.what());
        code = 3;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  EXPECT_TRUE(compile_object(source, o).cached);
  EXPECT_EQ(temporaries_in(o.cache_dir), 0);
}

TEST_F(HostCompiler, UncreatableCacheDirIsNamed) {
  write_file(dir_ / "plain-file", "x");
  CompileOptions o = options();
  o.cache_dir = (dir_ / "plain-file" / "cache").string();
  std::string message = error_of([&] { compile_object(kAdd, o); });
  EXPECT_NE(message.find(o.cache_dir), std::string::npos) << message;

  o.cache_dir = (dir_ / "plain-file").string();
  message = error_of([&] { compile_object(kAdd, o); });
  EXPECT_NE(message.find(o.cache_dir), std::string::npos) << message;
}

TEST_F(HostCompiler, CompileErrorNamesTheSourceAndQuotesTheCompiler) {
  CompileOptions o = options();
  std::string message = error_of([&] { compile_object("extern \"C\" int f( { }\n", o); });
  EXPECT_NE(message.find(o.cache_dir), std::string::npos) << message;
  EXPECT_NE(message.find(".cpp"), std::string::npos) << message;
  EXPECT_NE(message.find("error"), std::string::npos) << message;
  EXPECT_EQ(temporaries_in(o.cache_dir), 0);
}

TEST_F(HostCompiler, LongDiagnosticsAreCutToTheFirstLines) {
  CompileOptions o = options();
  std::string source;
  for (int i = 0; i < 60; ++i)
    source += "int f" + std::to_string(i) + "() { return x; }\n";
  std::string message = error_of([&] { compile_object(source, o); });
  EXPECT_LE(std::count(message.begin(), message.end(), '\n'), 33) << message;
  EXPECT_NE(message.find("more lines"), std::string::npos) << message;
}

TEST_F(HostCompiler, MissingCompilerIsNamed) {
  CompileOptions o = options();
  o.compiler = "vtc-no-such-compiler-91c2";
  std::string message = error_of([&] { compile_object(kAdd, o); });
  EXPECT_NE(message.find("vtc-no-such-compiler-91c2"), std::string::npos) << message;
}

TEST_F(HostCompiler, MissingSymbolNamesSymbolAndLibrary) {
  LoadedObject loaded = compile_and_load(kAdd, options());
  std::string message =
      error_of([&] { loaded.library.symbol<int(int, int)>("vtc_no_such_symbol"); });
  EXPECT_NE(message.find("vtc_no_such_symbol"), std::string::npos) << message;
  EXPECT_NE(message.find(loaded.object.so_path), std::string::npos) << message;
}

TEST_F(HostCompiler, MissingLibraryIsNamed) {
  std::string path = (dir_ / "absent.so").string();
  std::string message = error_of([&] { SharedLibrary lib(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST_F(HostCompiler, SharedLibraryMovesOwnership) {
  LoadedObject loaded = compile_and_load(kAdd, options());
  SharedLibrary moved = std::move(loaded.library);
  EXPECT_EQ(call_add(moved, 3, 4), 7);
  std::string message = error_of([&] { call_add(loaded.library, 3, 4); });
  EXPECT_NE(message.find("vtc_add"), std::string::npos) << message;
}

TEST_F(HostCompiler, VerboseReportsProgress) {
  CompileOptions o = options();
  o.verbose = true;
  ::testing::internal::CaptureStderr();
  compile_object(kAdd, o);
  compile_object(kAdd, o);
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("compiling 1 lines of generated C++"), std::string::npos) << log;
  EXPECT_NE(log.find("done in"), std::string::npos) << log;
  EXPECT_NE(log.find("(cached)"), std::string::npos) << log;
}

TEST_F(HostCompiler, QuietByDefault) {
  ::testing::internal::CaptureStderr();
  compile_object(kAdd, options());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

} // namespace
} // namespace vtc::jit
