// Properties a write through a mapping needs (each physical element written once; all of it
// written) and the inverse of an invertible affine mapping.
//   injective: no two virtual indices reach the same base element.
//   covers:    a set of write mappings reaches every element of a base exactly once.
//   inverse:   for a bijective single-piece mapping whose offset is a permuted row-major
//              layout (reshapes and transposes), the mapping of the base back onto V.
// Mappings with loads or searches depend on run-time data, so the answer there is `unknown`.
#pragma once

#include <vector>

#include "mapping/mapping.h"

namespace vtc {

enum class Tri { no, yes, unknown };
const char* tri_name(Tri t);

Tri injective(const Mapping& m);
Tri covers(const std::vector<const Mapping*>& writes, const Base* base);
// `v` is the base that will stand for the virtual tensor in the inverse.
Result<Mapping> inverse(const Mapping& m, const Base* v);

} // namespace vtc
