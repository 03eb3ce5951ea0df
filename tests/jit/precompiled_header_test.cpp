// The precompiled preamble with the system compiler: the include line names an entry of the
// cache directory and touches nothing; building it writes the header and its .gch once; a part
// that includes it compiles against the .gch (shown by a header text that would not compile),
// or against the header's text before the .gch is built; a preamble that does not compile
// leaves the text for the part to report.
#include "jit/precompiled_header.h"

#include "jit/cache_key.h"
#include "jit/host_compiler.h"
#include "jit_test_util.h"
#include "vtc/error.h"

namespace vtc::jit {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::write_file;

const char* kPreamble = "#include <cmath>\ninline int twice(int x) { return 2 * x; }\n";
const char* kPart = "extern \"C\" int vtc_twice(int x) { return twice(x); }\n";

// The path in the include line `#include "PATH"\n`.
fs::path included_path(const std::string& line) {
  const size_t open = line.find('"'), close = line.rfind('"');
  return line.substr(open + 1, close - open - 1);
}

bool takes_gch(const CompileOptions& o) {
  return compiler_identity(o.compiler).find("clang") == std::string::npos;
}

class PrecompiledHeader : public testing::ScratchDirTest {};

TEST_F(PrecompiledHeader, IncludeLineNamesACacheEntryAndTouchesNothing) {
  const CompileOptions o = options();
  if (!takes_gch(o)) GTEST_SKIP() << "the compiler takes no .gch";
  const std::string line = preamble_include(kPreamble, o);
  ASSERT_EQ(line.rfind("#include \"", 0), 0u) << line;
  const fs::path header = included_path(line);
  EXPECT_EQ(header.parent_path(), fs::absolute(o.cache_dir));
  EXPECT_EQ(header.extension(), ".h");
  EXPECT_FALSE(fs::exists(header));
  EXPECT_EQ(preamble_include(kPreamble, o), line);                     // a function of its input
  EXPECT_NE(preamble_include(std::string(kPreamble) + "\n", o), line); // and of all of it
}

TEST_F(PrecompiledHeader, BuiltOnceAndUsedByParts) {
  const CompileOptions o = options();
  if (!takes_gch(o)) GTEST_SKIP() << "the compiler takes no .gch";
  const std::string line = preamble_include(kPreamble, o);
  const fs::path header = included_path(line), gch = header.string() + ".gch";
  const PreambleBuild first = build_preamble(kPreamble, o);
  EXPECT_TRUE(first.built);
  EXPECT_GT(first.seconds, 0.0);
  EXPECT_EQ(read_file(header), kPreamble);
  ASSERT_TRUE(fs::exists(gch));
  EXPECT_FALSE(build_preamble(kPreamble, o).built); // found in the cache
  // The text no longer compiles: a part that compiles took the precompiled header.
  write_file(header, "#error the header was parsed as text\n");
  LoadedObject part = compile_and_load(line + kPart, o);
  EXPECT_EQ(part.library.symbol<int(int)>("vtc_twice")(21), 42);
  for (const auto& entry : fs::directory_iterator(o.cache_dir))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST_F(PrecompiledHeader, WrittenAloneTheHeaderIsParsedAsText) {
  const CompileOptions o = options();
  if (!takes_gch(o)) GTEST_SKIP() << "the compiler takes no .gch";
  const std::string line = preamble_include(kPreamble, o);
  const fs::path header = included_path(line);
  write_preamble(kPreamble, o);
  EXPECT_EQ(read_file(header), kPreamble);
  EXPECT_FALSE(fs::exists(header.string() + ".gch")); // a part may compile before it is built
  LoadedObject part = compile_and_load(line + kPart, o);
  EXPECT_EQ(part.library.symbol<int(int)>("vtc_twice")(5), 10);
  EXPECT_TRUE(build_preamble(kPreamble, o).built); // the header written, the .gch still to build
}

TEST_F(PrecompiledHeader, ACorruptHeaderFallsBackToTheText) {
  const CompileOptions o = options();
  if (!takes_gch(o)) GTEST_SKIP() << "the compiler takes no .gch";
  const std::string line = preamble_include(kPreamble, o);
  build_preamble(kPreamble, o);
  write_file(included_path(line).string() + ".gch", "not a precompiled header");
  LoadedObject part = compile_and_load(line + kPart, o);
  EXPECT_EQ(part.library.symbol<int(int)>("vtc_twice")(4), 8);
}

TEST_F(PrecompiledHeader, APreambleThatDoesNotCompileIsReportedByThePart) {
  const CompileOptions o = options();
  if (!takes_gch(o)) GTEST_SKIP() << "the compiler takes no .gch";
  const std::string bad = "inline int twice(int x) { return 2 * y; }\n";
  const std::string line = preamble_include(bad, o);
  const PreambleBuild b = build_preamble(bad, o);
  EXPECT_FALSE(b.built);
  EXPECT_FALSE(fs::exists(included_path(line).string() + ".gch"));
  try {
    compile_and_load(line + kPart, o);
    ADD_FAILURE() << "expected vtc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was not declared in this scope"), std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace vtc::jit
