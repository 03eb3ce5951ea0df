// C++ source for index expressions and pieces, valid both in host C++ and in CUDA device code
// (no library calls, no helpers: floor division and modulo of possibly negative values are
// written out inline). Arithmetic is 64-bit (`long long`) when any intermediate value or any
// load could leave the 32-bit range, 32-bit otherwise.
//   emit(i0*4096 + (i1 floordiv 4)*128)   ->  "i0 * 4096 + (i1 / 4) * 128"
//   emit_offset(piece)                     ->  the flat element offset into the piece's base
//   emit_guard(piece)                      ->  a bool expression; searches become
//                                              immediately-invoked lambdas
#pragma once

#include <functional>
#include <string>

#include "mapping/mapping.h"

namespace vtc {

struct EmitNames {
  // Name of index variable `id` (default "i<id>"; search variables of a piece are named by the
  // piece emitters).
  VarNamer var;
  // Name of the pointer to a base's elements (default: the base name with non-identifier
  // characters replaced by '_').
  std::function<std::string(const Base*)> base;
};

std::string emit_base_name(const Base* b);
// True when `e` needs 64-bit arithmetic.
bool needs_64bit(IndexExpr e);
std::string emit(IndexExpr e, const EmitNames& names = {});
std::string emit_offset(const Piece& p, const EmitNames& names = {});
// The test that an index lies in the piece's guard. Bounds that `extents` (the virtual tensor's
// shape) already keep are left out: an accessor is indexed within its shape.
std::string emit_guard(const Piece& p, const EmitNames& names = {},
                       const std::vector<int64_t>& extents = {});

} // namespace vtc
