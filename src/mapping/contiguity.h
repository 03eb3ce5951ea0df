// Contiguity of a mapping (paper §4.3): over how many consecutive innermost virtual indices do
// consecutive physical addresses follow, and how profitable reading or writing through the
// mapping is likely to be:
//   Type I     one piece, identity strides plus a constant offset: the virtual tensor is a
//              contiguous window of its base; always profitable.
//   partial    every run is at least one memory transaction (32 bytes on GPU, a 64-byte cache
//              line on CPU); likely profitable.
//   Type II    anything else; profitability must be measured.
// Example: Split of [M, N] along axis 1 into [M, s] pieces: each row of the output is s
// consecutive elements of the input, so run = s; partial when s·elem_bytes ≥ the transaction.
#pragma once

#include <cstdint>

#include "mapping/mapping.h"

namespace vtc {

inline constexpr int64_t kGpuTransactionBytes = 32;
inline constexpr int64_t kCpuCacheLineBytes = 64;

enum class Profitability { type1, partial, type2 };
const char* profitability_name(Profitability p);

struct Contiguity {
  int64_t run = 1;       // elements; runs start at virtual flat indices that are multiples of it
  int64_t alignment = 1; // physical offsets of run starts are multiples of this (divides run)
  Profitability type = Profitability::type2;
};

// The run of one piece over the innermost virtual dimension(s) of its guard, and its alignment.
Contiguity piece_contiguity(const Piece& p);

// The whole mapping: the smallest run over its pieces (constant pieces read no memory) and the
// classification for elements of `elem_bytes` against a `transaction_bytes` transaction.
Contiguity contiguity(const Mapping& m, int64_t elem_bytes,
                      int64_t transaction_bytes = kGpuTransactionBytes);

} // namespace vtc
