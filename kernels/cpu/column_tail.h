// Which last B panels of the GEMM engine (gemm_core.h) run on the column tail tile: a pure
// function of the vector width, the register tile's vectors and N, apart from the SIMD code so
// that vtc itself can list the engine instances a host's generated code may call (the shared
// instances compiled once, cpu_unit_compiler.cpp).
#pragma once

#include <cstdint>

namespace vtc::kernels {

// The last columns of a panel that a vector would mostly waste: up to this many are computed
// by tail_tile() instead.
inline constexpr int kColumnTail = 4;

// The real columns of the last B panel of N columns when tail_tile() runs it, for panels of
// `nv` vectors of `width` values: narrower than nv vectors with at most kColumnTail columns past
// its whole vectors; 0 otherwise (and always for scalar code, width 1).
constexpr int column_tail_width_of(int width, int nv, int64_t n) {
  const int64_t nr = int64_t(nv) * width;
  if (width == 1 || n <= 0) return 0;
  const int64_t last = n - (n - 1) / nr * nr;
  return last / width < nv && last % width <= kColumnTail ? int(last) : 0;
}

} // namespace vtc::kernels
