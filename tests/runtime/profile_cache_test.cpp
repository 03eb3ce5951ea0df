// The profiled choice kept in the compile cache: what is written reads back whole (node names
// with spaces, library names of two words), a file of another format or a damaged one reads as
// none, and the options of a stored choice take each node off its library as the profile did
// and the all-physical strategy where it was kept.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "runtime/profile_cache.h"

namespace vtc {
namespace {

class ProfileCache : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() /
        ("vtc_profile_cache_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

ProfiledPlan sample() {
  ProfiledPlan p;
  p.greedy_ms = 0.767;
  p.vtc_kernels_ms = 0.701;
  p.per_node_ms = 0.652;
  p.physical_ms = 0.9;
  p.kept = "greedy, per node";
  p.nodes = {{"stage3/unit 1/pw1", "cudnn", 0.021, 0.008, false},
             {"conv5", "cublaslt", 0.025, 0.031, true},
             {"proj", "openblas sgemm", 0.5, 0.4, false}};
  return p;
}

TEST_F(ProfileCache, WhatIsWrittenReadsBack) {
  write_profile(dir_.string(), "k1", sample());
  const std::optional<ProfiledPlan> p = read_profile(dir_.string(), "k1");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->from_cache);
  EXPECT_EQ(p->kept, "greedy, per node");
  EXPECT_FALSE(p->kept_physical);
  EXPECT_DOUBLE_EQ(p->greedy_ms, 0.767);
  EXPECT_DOUBLE_EQ(p->per_node_ms, 0.652);
  EXPECT_DOUBLE_EQ(p->physical_ms, 0.9);
  ASSERT_EQ(p->nodes.size(), 3u);
  EXPECT_EQ(p->nodes[0].node, "stage3/unit 1/pw1");
  EXPECT_FALSE(p->nodes[0].on_library);
  EXPECT_DOUBLE_EQ(p->nodes[0].vtc_ms, 0.008);
  EXPECT_EQ(p->nodes[1].library, "cublaslt");
  EXPECT_TRUE(p->nodes[1].on_library);
  EXPECT_EQ(p->nodes[2].library, "openblas sgemm");
  EXPECT_FALSE(read_profile(dir_.string(), "k2")); // another key: nothing stored
}

TEST_F(ProfileCache, AnotherFormatOrADamagedFileReadsAsNone) {
  write_profile(dir_.string(), "k1", sample());
  const std::filesystem::path file = dir_ / "profiles" / "k1.txt";
  ASSERT_TRUE(std::filesystem::exists(file));
  std::ofstream(file) << "vtc profiled plan 0\nkept greedy\n";
  EXPECT_FALSE(read_profile(dir_.string(), "k1"));
  std::ofstream(file) << "vtc profiled plan 1\nkept greedy\nms 0.5 zero 0 0\n";
  EXPECT_FALSE(read_profile(dir_.string(), "k1"));
  std::ofstream(file) << "vtc profiled plan 1\nkept greedy\nspeed 3\n";
  EXPECT_FALSE(read_profile(dir_.string(), "k1"));
}

TEST_F(ProfileCache, KeptOptionsTakeNodesOffTheirLibraryAndThePhysicalStrategy) {
  Options o;
  o.library_nodes = {{"pinned", LibraryMode::always}};
  ProfiledPlan p = sample();
  Options kept = kept_options(o, p);
  EXPECT_EQ(kept.strategy, StrategyKind::greedy);
  const std::map<std::string, LibraryMode> expected{{"stage3/unit 1/pw1", LibraryMode::never},
                                                    {"proj", LibraryMode::never},
                                                    {"pinned", LibraryMode::always}};
  EXPECT_EQ(kept.library_nodes, expected);
  p.kept_physical = true;
  EXPECT_EQ(kept_options(o, p).strategy, StrategyKind::none);
}

} // namespace
} // namespace vtc
