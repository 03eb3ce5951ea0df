// Coalescing an index space that several mappings share (CuTe's `coalesce`, over mappings). A
// copy [1, 16, 16, 3, 10] <- transpose of [1, 3, 10, 16, 16] walks rows of 10 elements, and
// each row pays a kernel's fixed cost; yet on both sides dimensions 3 and 4 are one affine
// dimension of 30 (output strides 10 and 1, input strides 2560 and 256 = 10 * 256), and so are
// dimensions 1 and 2, so the same copy is [256, 30]: the same elements in the same order, with
// rows three times longer. Two adjacent dimensions merge when every mapping, read over the
// merged index space, is as affine in the merged variable as it was in the two: each piece's
// offset in its base holds no floordiv, mod or load of it, and no piece is added. (Offsets are
// what an accessor of a physical base computes; a caller whose bases are virtual values, read
// through nested accessors index by index, should not coalesce.)
#pragma once

#include <vector>

#include "mapping/mapping.h"

namespace vtc {

// An index space and the mappings that share it.
struct CoalescedSpace {
  Shape shape;
  std::vector<Mapping> mappings;
};

// `mappings` (of one shape) over the fewest dimensions that keep each of them affine where
// they were: adjacent dimensions merged from the last to the first (a dimension of extent 1
// always merges). The index space is row-major in the same order, so element k of the merged
// space is element k of the original.
CoalescedSpace coalesce(const std::vector<Mapping>& mappings);

} // namespace vtc
