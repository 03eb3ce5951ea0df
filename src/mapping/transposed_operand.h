// Reading a matrix operand through its transpose. Decode attention multiplies q by K^T, where
// K^T is a virtual transpose of the K cache: along its rows (the GEMM's B rows, over cache
// positions) consecutive elements lie a head dimension apart, while its columns are rows of
// the cache, contiguous. A kernel handed the transpose's own mapping, [.., N, K] with runs
// along K, reads each column as one run (gemm_bt in kernels/cpu/gemm.h) instead of gathering
// every B row element by element.
#pragma once

#include <optional>

#include "mapping/mapping.h"

namespace vtc {

// `m`, the mapping of the value `base` names (shape [.., K, N]), seen with its last two
// dimensions swapped, when its own rows are not runs of memory but the swapped view's rows
// (K elements each) are; nullopt otherwise.
std::optional<Mapping> transposed_operand(const Mapping& m, const Base* base, int64_t elem_bytes);

} // namespace vtc
