// Reading a matrix operand through its transpose. Decode attention multiplies q by K^T, where
// K^T is a virtual transpose of the K cache: along its rows (the GEMM's B rows, over cache
// positions) consecutive elements lie a head dimension apart, while its columns are rows of
// the cache, contiguous. A kernel handed the transpose's own mapping, [.., N, K] with runs
// along K, reads each column as one run (gemm_bt in kernels/cpu/gemm.h) instead of gathering
// every B row element by element. The cost model asks the same question of every operand a
// GEMM reads (NN or NT, whichever has the longer runs) through swap_last_two.
#pragma once

#include <optional>

#include "mapping/mapping.h"

namespace vtc {

// `m`, the mapping of the value `base` names (shape [.., K, N]), seen with its last two
// dimensions swapped, when its own rows are not runs of memory but the swapped view's rows
// (K elements each) are; nullopt otherwise.
std::optional<Mapping> transposed_operand(const Mapping& m, const Base* base, int64_t elem_bytes);

// `m` read with its last two virtual dimensions exchanged, by substitution: each piece's guard
// ranges swap and variable r-2 becomes r-1 and r-1 becomes r-2 in its index expressions and
// searches. Needs rank >= 2 and every piece's guard non-empty in its last two dimensions.
Mapping swap_last_two(const Mapping& m);
// `m` read with virtual dimensions a and b exchanged, the same way.
Mapping swap_dims(const Mapping& m, int a, int b);

} // namespace vtc
