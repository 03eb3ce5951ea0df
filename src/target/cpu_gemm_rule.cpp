// The rule, from bench/kernels_bench on the development machine (AMD EPYC, Zen 5, AVX-512;
// Debian's OpenBLAS 0.3.21 runs its Haswell kernels there) with OMP_NUM_THREADS=1, dense
// row-major f32, time per product (template / OpenBLAS):
//
//   one column, N = 1 (OpenBLAS: sgemv)
//     64 x 64 x 1                3.2 us /  0.18 us   OpenBLAS 18x
//     512 x 512 x 1              114 us /  10.8 us   10x
//     4096 x 4096 x 1           19.7 ms /  1.80 ms   11x
//   one row, M = 1 (decode at batch 1; OpenBLAS: sgemv)
//     1 x 512 x 512             12.2 us /  10.5 us   ~tie
//     1 x 1024 x 1024           52.6 us /  48.9 us   tie
//     1 x 4096 x 4096           1.72 ms /  1.73 ms   tie (memory bandwidth)
//     1 x 4096 x 14336          7.0 ms  /  7.2 ms    tie
//     1 x 14336 x 4096          6.4 ms  /  7.3 ms    template
//   batches sharing B, one row each (decode at batch 4 and 16: the template streams B once
//   per batch, OpenBLAS folds the rows into one product)
//     16 x (1 x 4096 x 4096)    28.5 ms /  8.0 ms    OpenBLAS 3.6x
//     16 x (1 x 4096 x 14336)    125 ms / 29.0 ms    4.3x
//     16 x (1 x 14336 x 4096)    114 ms / 28.3 ms    4.0x
//     16 x (1 x 4096 x 1024)    3.44 ms /  1.77 ms   1.9x
//     16 x (1 x 512 x 512)       160 us /  102 us    1.6x
//     16 x (1 x 64 x 64)         2.4 us /  1.3 us    1.8x
//     4 x (1 x 4096 x 4096)     6.95 ms /  4.89 ms   1.4x
//     4 x (1 x 4096 x 14336)    30.7 ms / 17.5 ms    1.75x
//     4 x (1 x 4096 x 1024)     1.17 ms /  0.87 ms   1.35x
//     4 x (1 x 512 x 512)       41.1 us /  51.0 us   template
//   a few rows, one product
//     4 x 4096 x 4096           3.7 ms  /  4.9 ms    template (its GEMV path, M <= 4)
//     8 x 4096 x 4096           10.0 ms /  6.2 ms    OpenBLAS 1.6x
//     16 x 4096 x 4096          12.1 ms /  8.0 ms    1.5x
//     16 x 4096 x 14336         42.8 ms / 27.6 ms    1.5x
//     16 x 4096 x 1024          2.0 ms  /  1.7 ms    1.2x
//     16 x 2048 x 2048          1.85 ms /  1.56 ms   1.2x
//     24 x 4096 x 4096          12.0 ms / 10.0 ms    1.2x
//     32 x 4096 x 4096          13.3 ms / 12.4 ms    tie
//     16 x 1024 x 1024           341 us /  346 us    tie
//     16 x 512 x 512           75-82 us /   98 us    template
//   many rows (prefill, small models)
//     64 x 4096 x 4096          18.2 ms / 20.4 ms    template
//     128 x 4096 x 4096         26.5 ms / 36.7 ms    template 1.4x
//     512 x 512 x 512           1.23 ms /  2.10 ms   template 1.7x
//     196 x 256 x 256            127 us /  208 us    template 1.6x
//   batches of small products, each its own B
//     8 x (64 x 64 x 64)        39.7 us / 36.4 us    tie
//     8 x (196 x 32 x 196)       144 us /  175 us    template
//
// End to end, the Llama-3-8B decoder layer at batch 16 (vtc bench, greedy, one thread): the
// MLP projections take 28 ms each on OpenBLAS against 107-118 ms on the template, the layer
// 539 ms against 852 ms. Figures on two threads agree in direction where they could be
// measured (the development machine's two cores are shared).
//
// So OpenBLAS where it is clearly (>= 1.2x) faster: a single column; rows of batches that
// share B when the template would run them as GEMVs (at most 4 rows each), for 16 rows or
// more or a B of at least 2048 x 2048; and 5 to 24 rows against a B of at least 2048 x 2048
// (the template's packed path does not amortise packing B over so few rows). Everywhere else
// the template is as fast or faster, and it can read virtual operands.
#include "target/cpu_gemm_rule.h"

namespace vtc {

namespace {

constexpr int64_t kLargeB = int64_t(2048) * 2048; // elements of B

} // namespace

bool prefer_library_gemm(const GemmShape& s) {
  if (s.batch != 1) return false;
  if (s.N == 1) return s.M * s.K >= 64 * 64;
  const int64_t template_rows = s.M / s.folded;
  if (s.folded > 1 && template_rows <= 4) return s.M >= 16 || s.K * s.N >= kLargeB;
  return template_rows >= 5 && template_rows <= 24 && s.K * s.N >= kLargeB;
}

} // namespace vtc
