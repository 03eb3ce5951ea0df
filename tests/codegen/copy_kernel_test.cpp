// Which copies the cuda dialect runs through shared-memory tiles: an input that runs along a
// dimension before the output's last (a transpose of the last two axes, or of channels to the
// end), and not one that already runs along the last (a transpose of outer axes), a mapping of
// several pieces, or a last dimension shorter than a run.
#include <gtest/gtest.h>

#include "codegen/copy_kernel.h"
#include "mapping/base.h"
#include "mapping/layout.h"

namespace vtc {
namespace {

std::optional<int> tiled(const Shape& x, const std::vector<int64_t>& perm, int64_t elem = 2) {
  const Mapping m = transpose_read(named_base("x", x), perm);
  return transposed_dimension(m, m.shape, elem);
}

TEST(TransposedCopy, RunsAlongTheDimensionTheInputRunsAlong) {
  // [2, 8, 16, 64] -> [2, 8, 64, 16]: the input runs along output dimension 2.
  EXPECT_EQ(tiled({2, 8, 16, 64}, {0, 1, 3, 2}), std::optional<int>(2));
  // NCHW -> NHWC: the input's W runs along output dimension 2 (its H x W plane also along 1,
  // but a run of W elements is the longest a dimension exchange gives).
  EXPECT_EQ(tiled({4, 32, 20, 24}, {0, 2, 3, 1}), std::optional<int>(2));
  // NHWC -> NCHW: channels run along output dimension 1.
  EXPECT_EQ(tiled({4, 20, 24, 32}, {0, 3, 1, 2}), std::optional<int>(1));
  EXPECT_EQ(tiled({300, 40}, {1, 0}, 4), std::optional<int>(0));
}

TEST(TransposedCopy, GenericCopyWhereTheLastDimensionRunsOrIsShort) {
  EXPECT_EQ(tiled({2, 8, 16, 64}, {0, 2, 1, 3}), std::nullopt); // rows of 64 stay rows
  EXPECT_EQ(tiled({2, 8, 64, 4}, {0, 1, 3, 2}), std::nullopt);  // output rows of 4
  EXPECT_EQ(tiled({2, 4, 64}, {0, 2, 1}), std::nullopt);        // input runs of 4
  const Mapping pieces = transpose_read(named_base("x", {16, 64}), {1, 0});
  Mapping two = pieces;
  two.pieces.push_back(pieces.pieces[0]);
  EXPECT_EQ(transposed_dimension(two, two.shape, 2), std::nullopt);
}

} // namespace
} // namespace vtc
