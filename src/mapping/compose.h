// Composition of mappings (paper §4.1): when virtual tensor V reads W through `outer` and W is
// itself virtual, reading its bases through `inner`, compose gives V directly in terms of W's
// bases. Every piece of `outer` whose base is W is replaced by one piece per piece of `inner`
// that it reaches: the inner guard is pulled back into the outer guard (splitting it where an
// outer index expression crosses an inner guard boundary), the inner expressions are
// substituted with the outer ones, and searches are concatenated. Pieces of `outer` on other
// bases are kept.
//
// Example: V = Concat(a[2,3], b[2,3]) along axis 1, W = that [2,6], outer = Slice W[:, 2:5]
// (index (i0, i1 + 2)); composing gives two pieces: [0:2, 0:1] -> a[i0, i1 + 2] and
// [0:2, 1:3] -> b[i0, i1 - 1].
#pragma once

#include "mapping/mapping.h"

namespace vtc {

// The limit on pieces a composition may produce before it gives up.
inline constexpr size_t kMaxComposedPieces = 256;

// V of P from V of W (`outer`) and W of P (`inner`, whose shape must be w's). Fails, with the
// reason, when an inner guard's preimage is not a union of boxes this can express (an outer
// index mixing several variables crosses an inner boundary) or has too many pieces.
Result<Mapping> compose(const Mapping& outer, const Base* w, const Mapping& inner);

// The ranges of variable `var` (within `within`) where `e`, a function of that variable only,
// lies in [target.lo, target.hi); nullopt when `e` is not monotone and the range is too large
// to enumerate.
std::optional<std::vector<Range>> preimage(IndexExpr e, int var, Range within, Range target);

} // namespace vtc
