// Tests of transposed_operand (src/mapping/transposed_operand.h): a virtual transpose of a K
// cache is read through the cache's own layout, rows of K contiguous elements; a value whose
// rows are runs already, or whose transpose has no runs either, keeps its own mapping.
#include <gtest/gtest.h>

#include "mapping/transposed_operand.h"
#include "mapping/base.h"
#include "mapping/layout.h"

namespace vtc {
namespace {

TEST(TransposedOperand, KCacheTransposeReadsCacheRows) {
  const Base* k = named_base("k", {8, 16, 128}); // [heads, positions, head dim]
  const Base* kt = named_base("kt", {8, 128, 16});
  std::optional<Mapping> t = transposed_operand(transpose_read(k, {0, 2, 1}), kt, 4);
  ASSERT_TRUE(t);
  EXPECT_EQ(to_string(*t), "map [8,16,128]\n  piece 0: [0:8, 0:16, 0:128] -> k[i0, i1, i2]\n");
}

TEST(TransposedOperand, NoneWhenRowsAreRunsOrColumnsAreNot) {
  const Base* x = named_base("x", {4, 6, 5});
  // Physical: its rows are runs already.
  EXPECT_FALSE(transposed_operand(transpose_read(x, {0, 1, 2}), named_base("y", {4, 6, 5}), 4));
  // A transpose of the outer two dimensions: neither rows nor columns of the view are runs.
  EXPECT_FALSE(transposed_operand(transpose_read(x, {2, 1, 0}), named_base("w", {5, 6, 4}), 4));
}

} // namespace
} // namespace vtc
