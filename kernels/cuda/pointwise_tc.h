// Pointwise convolutions of few input channels on the tensor cores: Y[b, m, n] = sum_k
// W[m, k] * X[b, k, n] for f16 or bf16 operands with K (input channels) at most 32 and M (output
// channels) at most 128, over planes of many pixels (n): EfficientViT's expanding convolutions
// (16 -> 64 channels over 256^2 pixels, 32 -> 128 over 128^2). They move 4-8 output bytes for
// every input byte and do almost no arithmetic: gemm_tc's streamed 64 x 64 tiles spent their
// time in the epilogue's shared-memory round trip and barriers (1.2 TB/s, 107 registers, a
// quarter of the warps a multiprocessor holds), and cuBLASLt wrote its raw product for a second
// kernel to read back.
//
// A block of 8 warps walks tiles of 128 pixels of one image (grid-stride). W is staged in shared
// memory once; each tile's X rows (K x 128) arrive by cp.async (or loads where the operand does
// not allow it) into one of two stages while the tile before is computed and stored. A warp takes
// 16 pixels and every output channel: for each 16 channels, W's fragment by ldmatrix and
// mma.sync m16n8k16 over the k16 steps in order (the chain gemm_tc's k tiles give). The warp
// parks its accumulators in shared memory (kParkPitch floats a channel) and each lane stores 8
// adjacent pixels of a channel (store_floats<8>: the epilogue — bias, activation, residual —
// and the conversion, one 16-byte store): 16 channels of 32 bytes a store instruction, every
// sector written once. Stored straight from the accumulators as pairs of pixels, each sector
// took two half-sector requests (H100, 16 -> 64 over 16 x 256^2: 0.116 ms, L2 78 %, DRAM 37 %;
// parked 0.103 ms, L2 48 %, DRAM 43 %; kernels/cuda/NOTES.md). Code generation gives it only
// the shapes where it measured faster than gemm_tc (pointwise_tc_takes: at most 16 inputs and
// 64 outputs).
#pragma once

#include "../common/window_shapes.h"
#include "gemm_tc.h"

namespace vtc::kernels {

struct PointwisePlan {
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

namespace pointwise_tc_config {
inline constexpr int kPixels = 128, kWarps = 8, kThreads = 32 * kWarps;
// The shapes the kernel takes (the template holds up to 128 channels of 32 inputs).
inline constexpr int kMaxK = 32, kMaxM = 128;
// The shapes code generation gives it: where it measured faster than gemm_tc and cuBLASLt (H100,
// f16, 16 images: 16 -> 64 channels over 256^2 pixels 0.117 ms against gemm_tc's 0.138 and
// cuBLASLt's 0.167 with its epilogue pass; 32 -> 128 over 128^2 it took 0.083 against gemm_tc's
// 0.068, its 64 accumulators a thread leaving two blocks a multiprocessor).
inline constexpr int kTakesK = 16, kTakesM = 64;
// Floats a parked row of a warp's accumulators: its 16 pixels and 4 more, so rows stay 16-byte
// aligned and the 8 rows a quarter warp reads back fall in distinct banks.
inline constexpr int kParkPitch = 20;
} // namespace pointwise_tc_config

// Whether a product of this shape may run on pointwise_tc: K and M small, and pixels enough
// for every multiprocessor (else gemm_tc's split-K plan suits it better).
VTC_HD constexpr bool pointwise_tc_fits(const PointwisePlan& p) {
  using namespace pointwise_tc_config;
  return p.k <= kMaxK && p.m <= kMaxM && p.batch * cdiv(p.n, kPixels) >= 4 * 132;
}
// The plan of a convolution that is a product per image (pointwise_conv2d):
// W [c_out, c_in] . X [c_in, h * w].
VTC_HD constexpr PointwisePlan pointwise_plan(const Conv2dShape& c) {
  return PointwisePlan{c.n, c.c_out, c.h * c.w, c.c_in};
}
// Whether code generation runs a 16-bit convolution of this shape on pointwise_tc.
VTC_HD constexpr bool pointwise_tc_takes(const Conv2dShape& c) {
  using namespace pointwise_tc_config;
  const PointwisePlan p = pointwise_plan(c);
  return pointwise_conv2d(c) && p.k <= kTakesK && p.m <= kTakesM && pointwise_tc_fits(p);
}
// Output channels and input channels in whole mma tiles.
VTC_HD constexpr int pointwise_m_tiles(int64_t m) {
  return int(cdiv(m, 16));
}
VTC_HD constexpr int pointwise_k_steps(int64_t k) {
  return int(cdiv(k, 16));
}
// Shared memory: W (m tiles x 16 rows of k steps x 16 + 8 halves), then two stages of X
// (k steps x 16 rows of kPixels + 8 halves), then each warp's park (m tiles x 16 rows of
// kParkPitch floats).
VTC_HD constexpr unsigned pointwise_tc_smem_bytes(const PointwisePlan& p) {
  using namespace pointwise_tc_config;
  const int64_t kp = pointwise_k_steps(p.k) * 16, rows = pointwise_m_tiles(p.m) * 16;
  return unsigned((rows * (kp + 8) + 2 * kp * (kPixels + 8)) * 2 + kWarps * rows * kParkPitch * 4);
}
// Resident blocks a multiprocessor: two with 8 m tiles (64 accumulators a thread), else three.
VTC_HD constexpr int pointwise_tc_resident(const PointwisePlan& p) {
  return pointwise_m_tiles(p.m) > 4 ? 2 : 3;
}
VTC_HD constexpr Launch pointwise_tc_launch(const PointwisePlan& p) {
  using namespace pointwise_tc_config;
  const int64_t tiles = p.batch * cdiv(p.n, kPixels);
  const int resident = pointwise_tc_resident(p);
  return Launch{{unsigned(clamp64(tiles, 1, int64_t(resident) * 132)), 1, 1},
                {unsigned(kThreads), 1, 1},
                pointwise_tc_smem_bytes(p),
                unsigned(resident)};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

// Whether pointwise_tc's stores go through the warp's park: where the output takes 8 adjacent
// pixels as one 16-byte store (else pairs straight from the accumulators).
template <class Out> inline constexpr bool kParkedStores = cuda::vector_store_capable<Out, 8>();

// Y = W . X through accessors: out [batch, m, n], w [1 or batch, m, k] (read at batch 0: the
// same weights for every image), x [batch, k, n]; MT = pointwise_m_tiles(m), KS =
// pointwise_k_steps(k). Launch: pointwise_tc_launch(plan).
template <int MT, int KS, class Out, class W, class X>
__device__ void pointwise_tc(Out out, W w, X x, PointwisePlan p) {
  using namespace cuda;
  using namespace pointwise_tc_config;
  constexpr int kind = float16_kind<typename W::value_type>;
  static_assert(Out::rank == 3 && W::rank == 3 && X::rank == 3, "pointwise_tc: rank-3 accessors");
  static_assert(kind != 0 && kind == float16_kind<typename X::value_type>,
                "pointwise_tc: W and X both f16 or both bf16");
  static_assert(MT >= 1 && MT * 16 <= kMaxM && KS >= 1 && KS * 16 <= kMaxK, "pointwise_tc: shape");
  constexpr int KP = KS * 16, APitch = KP + 8, BPitch = kPixels + 8, BStage = KP * BPitch;
  static_assert((MT * 16 * APitch + 2 * BStage) % 8 == 0, "pointwise_tc: the park 16-byte aligned");
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  uint16_t* sa = reinterpret_cast<uint16_t*>(vtc_smem);
  uint16_t* sb = sa + MT * 16 * APitch;
  float* sp = reinterpret_cast<float*>(sb + 2 * BStage); // the warps' parks (16-byte aligned)
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int64_t M = p.m, N = p.n, K = p.k;
  const int64_t per_image = cdiv(N, kPixels), tiles = p.batch * per_image;
  int64_t t = blockIdx.x;
  if (t >= tiles) return;

  // W's rows, zeros past M and K.
  for (int e = tid; e < MT * 16 * KP; e += kThreads) {
    const int r = e / KP, c = e % KP;
    sa[r * APitch + c] = load_bits(w, Index<3>{0, r, c}, r < M && c < K);
  }
  TileChunks<KP, kPixels, kThreads, false> chunks;
  auto fetch = [&](int64_t tile, int stage) {
    chunks.fetch(x, tile / per_image, 0, tile % per_image * kPixels, K, N, sb + stage * BStage,
                 BPitch);
    cp_async_commit();
  };
  fetch(t, 0);
  for (int stage = 0;; stage ^= 1) {
    const int64_t next = t + gridDim.x;
    if (next < tiles) {
      fetch(next, stage ^ 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads(); // this stage's X (and W, the first time) in place for every warp
    const uint16_t* tb = sb + stage * BStage;
    float acc[MT][2][4];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
#pragma unroll
      for (int ni = 0; ni < 2; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          acc[mi][ni][r] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      unsigned bf[4];
      ldmatrix_x4_trans(bf, tb + (ks * 16 + lane % 8 + (lane / 8) % 2 * 8) * BPitch + warp * 16 +
                                lane / 16 * 8);
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) {
        unsigned af[4];
        ldmatrix_x4(af, sa + (mi * 16 + lane % 16) * APitch + ks * 16 + lane / 16 * 8);
        mma_m16n8k16<kind>(acc[mi][0], af, bf[0], bf[1]);
        mma_m16n8k16<kind>(acc[mi][1], af, bf[2], bf[3]);
      }
    }
    __syncthreads(); // every warp done with this stage before the next tile's fetch refills it
    const int64_t bi = t / per_image;
    // The lane's accumulators as pairs of adjacent pixels: f(channel, pixel in the warp's 16,
    // the two values).
    auto each_pair = [&](auto f) {
#pragma unroll
      for (int mi = 0; mi < MT; ++mi)
#pragma unroll
        for (int ni = 0; ni < 2; ++ni)
#pragma unroll
          for (int half = 0; half < 2; ++half)
            f(mi * 16 + lane / 4 + half * 8, ni * 8 + lane % 4 * 2, acc[mi][ni][2 * half],
              acc[mi][ni][2 * half + 1]);
    };
    if constexpr (kParkedStores<Out>) {
      // The warp's 16 pixels of every channel parked, then whole 16-byte runs of 8 pixels a
      // lane: 16 rows of 32 bytes a store instruction, each sector written once.
      float* park = sp + warp * MT * 16 * kParkPitch;
      each_pair([&](int r, int c, float v0, float v1) {
        *reinterpret_cast<float2*>(park + r * kParkPitch + c) = make_float2(v0, v1);
      });
      __syncwarp();
      const int64_t n = t % per_image * kPixels + warp * 16 + lane / 16 * 8;
#pragma unroll
      for (int pass = 0; pass < MT; ++pass) {
        const int m = pass * 16 + lane % 16; // the channel, and its row of the park
        const float* src = park + m * kParkPitch + lane / 16 * 8;
        const float4 lo = *reinterpret_cast<const float4*>(src);
        const float4 hi = *reinterpret_cast<const float4*>(src + 4);
        const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
        const Index<3> i{bi, m, n};
        if (m < M && n < N) store_floats<8>(out, i, n + 8 <= N && vector_at<8>(out, i), N, v);
      }
      __syncwarp(); // the park is read before the next tile's accumulators go there
    } else {
      const int64_t n0 = t % per_image * kPixels + warp * 16;
      each_pair([&](int m, int c, float v0, float v1) {
        const int64_t n = n0 + c;
        if (m >= M || n >= N) return;
        const float v[2] = {v0, v1};
        const Index<3> i{bi, m, n};
        store_floats<2>(out, i, n + 2 <= N && vector_at<2>(out, i), N, v);
      });
    }
    if (next >= tiles) break;
    t = next;
  }
}

} // namespace vtc::kernels

#endif
