// The rule, from bench/kernels_bench on the development machine (AMD EPYC, Zen 5, AVX-512;
// Debian's OpenBLAS 0.3.21 runs its Haswell kernels there; dense row-major f32, one thread;
// time per product, vtc template vs OpenBLAS):
//
//   M x K x N            template   OpenBLAS
//   N = 1 (column)
//   64 x 64 x 1            3.2 us     0.18 us   sgemv: 18x
//   512 x 512 x 1          114 us     10.8 us   10x
//   4096 x 4096 x 1        19.7 ms    1.80 ms   11x
//   M = 1 (decode, batch 1)
//   1 x 512 x 512          12.2 us    10.5 us   sgemv: 1.15x, a few microseconds
//   1 x 1024 x 1024        52.6 us    48.9 us   tie
//   1 x 4096 x 4096        1.72 ms    1.73 ms   tie (bandwidth)
//   1 x 4096 x 14336       7.0 ms     7.2 ms    tie
//   1 x 14336 x 4096       6.4 ms     7.3 ms    template
//   M = 2..4 (template's GEMV path)
//   4 x 4096 x 4096        3.7 ms     4.9 ms    template
//   M = 5..24, large weights (decode at batch 16)
//   8 x 4096 x 4096        10.0 ms    6.2 ms    OpenBLAS 1.6x
//   16 x 4096 x 4096       12.1 ms    8.0 ms    1.5x
//   16 x 4096 x 14336      42.8 ms    27.6 ms   1.5x
//   16 x 14336 x 4096      44.5 ms    27.7 ms   1.6x
//   16 x 4096 x 1024       2.0 ms     1.7 ms    1.2x
//   16 x 2048 x 2048       1.85 ms    1.56 ms   1.2x
//   24 x 4096 x 4096       12.0 ms    10.0 ms   1.2x
//   32 x 4096 x 4096       13.3 ms    12.4 ms   tie
//   16 x 1024 x 1024       341 us     346 us    tie
//   16 x 512 x 512         75-82 us   98 us     template
//   M >= 64 (prefill, convolutions as GEMM, small models)
//   64 x 4096 x 4096       18.2 ms    20.4 ms   template
//   128 x 4096 x 4096      26.5 ms    36.7 ms   template 1.4x
//   512 x 512 x 512        1.23 ms    2.10 ms   template 1.7x
//   196 x 256 x 256        127 us     208 us    template 1.6x
//   batches of small products
//   8 x (64 x 64 x 64)     39.7 us    36.4 us   tie
//   8 x (196 x 32 x 196)   144 us     175 us    template
//
// So OpenBLAS where it is clearly (>= 1.15x) faster: a single column (sgemv), and 5..24 rows
// against a weight of at least 2048 x 2048 (the template packs panels of B that a few rows
// cannot amortise). Everywhere else the template is as fast or faster, and it can read
// virtual operands.
#include "codegen/gemm_library_rule.h"

namespace vtc {

bool prefer_library_gemm(int64_t batch, int64_t M, int64_t N, int64_t K) {
  if (batch != 1) return false;
  if (N == 1) return M * K >= 64 * 64;
  return M >= 5 && M <= 24 && K * N >= int64_t(2048) * 2048;
}

} // namespace vtc
