// Tests of copy_transposed.h: the tiled copy of a transposed input gives the bits of the
// generic copy (elementwise.h) for f32, i32, f16, bf16 and f64, over shapes whose extents are
// not whole tiles, with the input running along an inner or an outer dimension: tiles in vector
// registers (32-bit values behind ptr()), and tiles staged as compute values (other types, no
// ptr(), input runs shorter than a tile, an output without ptr()).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <type_traits>
#include <utility>

#include "kernel_test_util.h"
#include "kernels/cpu/copy_transposed.h"
#include "kernels/cpu/elementwise.h"

namespace vtc::kernels::test {
namespace {

// Accessor `a` read with dimensions J and R-1 exchanged: what the code generator hands
// copy_transposed for the input. Contig is the run of `a` along its dimension J.
template <typename A, int J, int64_t Contig> struct Swapped {
  using value_type = typename A::value_type;
  static constexpr int rank = A::rank;
  static constexpr int64_t contig = Contig;
  static constexpr bool has_ptr = A::has_ptr;
  A a;
  static Index<rank> swap(Index<rank> i) {
    std::swap(i[J], i[rank - 1]);
    return i;
  }
  auto load(const Index<rank>& i) const { return a.load(swap(i)); }
  value_type* ptr(const Index<rank>& i) const { return a.ptr(swap(i)); }
};

// The storage order of a tensor of rank R whose dimension J is innermost (its other
// dimensions in order): a transposed input that runs along J.
template <int R> std::array<int, R> j_innermost(int j) {
  std::array<int, R> perm{};
  int k = 0;
  for (int d = 0; d < R; ++d)
    if (d != j) perm[size_t(k++)] = d;
  perm[R - 1] = j;
  return perm;
}

// Contig: the runs along J the input's view declares (whole rows of J with ptr()).
template <typename T, int R, int J, bool HasPtr, int64_t Contig = HasPtr ? int64_t(1) << 30 : 1>
void check_copy(std::mt19937& rng, const Index<R>& shape) {
  std::string what = std::string(std::is_integral_v<T> ? "i32" : type_name<T>()) +
                     " J=" + std::to_string(J) + " shape";
  for (int64_t e : shape)
    what += " " + std::to_string(e);
  what += HasPtr ? " (ptr, runs of " + std::to_string(Contig) + ")" : " (load)";
  const double range = std::is_integral_v<T> ? 1e6 : 1.0;
  Tensor<T, R> values = random_tensor<T, R>(rng, shape, -range, range);
  PermutedAccessor<T, R, HasPtr> in(shape, j_innermost<R>(J));
  fill_from(in, values);
  Tensor<T, R> generic(shape), tiled(shape);
  copy(generic.acc(), shape, in);
  copy_transposed<J>(tiled.acc(), shape, Swapped<decltype(in), J, Contig>{in});
  expect_bitwise(tiled, generic, what);
  expect_bitwise(tiled, values, what + " against the values");
  // An output without ptr(): stored element by element.
  ComputedAccessor<T, R> out(shape);
  copy_transposed<J>(out, shape, Swapped<decltype(in), J, Contig>{in});
  expect_bitwise(out, generic, what + " into an output without ptr()");
}

TEST(CopyTransposed, BitsOfTheGenericCopy) {
  std::mt19937 rng(2207);
  // retinanet's heads, coalesced: [256, 30] from [30, 256].
  check_copy<float, 2, 0, true>(rng, {256, 30});
  check_copy<float, 2, 0, false>(rng, {64, 12});
  // Edges of tiles along both dimensions, and outer dimensions on both sides of J.
  check_copy<float, 3, 1, true>(rng, {2, 40, 37});
  check_copy<float, 4, 2, true>(rng, {3, 2, 33, 19});
  check_copy<float, 4, 1, true>(rng, {2, 17, 3, 130});
  check_copy<float, 3, 1, true, 8>(rng, {2, 40, 37}); // runs of 8: staged
  check_copy<int32_t, 3, 0, true>(rng, {50, 3, 18});
  check_copy<half, 3, 1, true>(rng, {3, 70, 100});
  check_copy<bfloat16, 3, 0, true>(rng, {9, 2, 65});
  check_copy<double, 3, 1, false>(rng, {2, 21, 9});
}

TEST(CopyTransposed, EmptyShapeWritesNothing) {
  Tensor<float, 3> out({2, 0, 8});
  PermutedAccessor<float, 3, true> in({2, 0, 8}, {0, 2, 1});
  copy_transposed<1>(out.acc(), Index<3>{2, 0, 8}, Swapped<decltype(in), 1, 1>{in});
  EXPECT_TRUE(out.data.empty());
}

} // namespace
} // namespace vtc::kernels::test
