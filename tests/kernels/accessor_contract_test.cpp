// The accessor contract of kernels/common/accessor.h as the cpu kernels see it: Index is a
// plain aggregate with array-like members; DenseAccessor and the test accessors satisfy
// Accessor, NoAccessor and types missing a declaration do not; compute_t is the type load()
// returns.
#include <gtest/gtest.h>

#include <type_traits>

#include "kernel_test_util.h"
#include "kernels/cpu/accessor.h"
#include "kernels/cpu/stage.h"

namespace vtc::kernels::test {
namespace {

static_assert(std::is_aggregate_v<Index<3>>);
static_assert(std::is_trivially_copyable_v<Index<3>> && std::is_standard_layout_v<Index<3>>);
static_assert(sizeof(Index<4>) == 4 * sizeof(int64_t));
static_assert(Index<0>::size() == 0 && Index<5>::size() == 5);
static_assert(Index<3>{1, 2, 3} == Index<3>{1, 2, 3} && Index<3>{1, 2, 3} != Index<3>{1, 2, 4});
static_assert(Index<0>{} == Index<0>{});
static_assert(Index<2>{7}[1] == 0); // value-initialised tail, as std::array's

// Declares everything but contig.
struct NoContig {
  using value_type = float;
  static constexpr int rank = 1;
  static constexpr bool has_ptr = false;
  float load(const Index<1>&) const { return 0; }
};

static_assert(Accessor<DenseAccessor<float, 2>>);
static_assert(Accessor<DenseAccessor<half, 0>>);
static_assert(Accessor<PermutedAccessor<bfloat16, 3, false>>);
static_assert(Accessor<SplitAccessor<float, 2, 4>>);
static_assert(Accessor<ComputedAccessor<double, 4>>);
static_assert(Accessor<ExpandAccessor<DenseAccessor<float, 4>, 1, 4>>);
static_assert(!Accessor<NoAccessor> && OptionalAccessor<NoAccessor>);
static_assert(!Accessor<NoContig> && !OptionalAccessor<NoContig>);
static_assert(!Accessor<float> && !Accessor<Index<2>>);

static_assert(std::is_same_v<compute_t<DenseAccessor<half, 2>>, float>);
static_assert(std::is_same_v<compute_t<ComputedAccessor<double, 1>>, double>);
static_assert(std::is_same_v<compute_t<DenseAccessor<int32_t, 1>>, int64_t>);
static_assert(std::is_same_v<compute_t<DenseAccessor<bool, 1>>, int64_t>);

TEST(IndexTest, BehavesAsTheArrayItReplaces) {
  Index<3> i{4, 5, 6};
  EXPECT_EQ(i.size(), 3);
  i[1] = 9;
  int64_t sum = 0;
  for (int64_t v : i)
    sum += v;
  EXPECT_EQ(sum, 19);
  EXPECT_EQ(i.end() - i.begin(), 3);
  const Index<3> copy = i;
  EXPECT_EQ(copy, i);
  EXPECT_NE(copy, (Index<3>{4, 5, 6}));
  Index<2> zero{};
  EXPECT_EQ(zero, (Index<2>{0, 0}));
  Index<0> none{};
  EXPECT_EQ(none.begin(), none.end());
}

TEST(IndexTest, DenseAccessorStridesAreRowMajor) {
  float data[24] = {};
  DenseAccessor<float, 3> a(data, {2, 3, 4});
  EXPECT_EQ(a.strides, (Index<3>{12, 4, 1}));
  EXPECT_EQ(a.ptr({1, 2, 3}), data + 23);
  a.store({1, 0, 2}, 2.5f);
  EXPECT_EQ(data[14], 2.5f);
  EXPECT_EQ(a.load({1, 0, 2}), 2.5f);
}

} // namespace
} // namespace vtc::kernels::test
