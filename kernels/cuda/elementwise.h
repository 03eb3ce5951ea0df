// Elementwise kernels over a rank-R index space: map() computes out[i] = f(in[i]...) for every
// index, copy() is map() with the identity — the generic kernel for data movement that stays
// physical, and the fused elementwise kernel (its input a computed accessor that evaluates the
// fused chain). Grid-stride: each thread takes groups of V consecutive elements along the last
// dimension (V = 16 bytes of the widest operand), row by row. copy_transposed is the copy of
// an input that runs along another dimension than the output (a transpose left physical).
//
// Fast path: when every operand has ptr(), its `contig` holds whole groups and the addresses
// are aligned, a group moves as one 16-byte access per operand (coalesced across the warp),
// computing from_compute(f(to_compute(x)...)) per element; a copy between operands of one
// storage type moves the bits (16-bit floats as a conversion round trip leaves them).
// Otherwise each element goes through load() and store(). The values are the same either way.
#pragma once

#include "common.h"

namespace vtc::kernels {

template <int R> struct MapShape { int64_t extent[R > 0 ? R : 1]; };

template <int R> VTC_HD constexpr int64_t map_elements(const MapShape<R>& s) {
  int64_t n = 1;
  for (int k = 0; k < R; ++k)
    n *= s.extent[k];
  return n;
}

// 256 threads; blocks for one group of (at most) 8 elements per thread, up to the grid-stride cap.
template <int R> VTC_HD constexpr Launch map_launch(const MapShape<R>& s) {
  const int64_t n = map_elements(s);
  const int64_t blocks = clamp64(cdiv(n, 256 * 8), 1, kMaxGridStrideBlocks);
  return Launch{{unsigned(blocks), 1, 1}, {256, 1, 1}, 0};
}
template <int R> VTC_HD constexpr Launch copy_launch(const MapShape<R>& s) {
  return map_launch(s);
}
// copy_bytes: 256 threads, a 16-byte word (or a byte) per thread and step.
VTC_HD constexpr Launch copy_bytes_launch(int64_t bytes) {
  const int64_t blocks = clamp64(cdiv(bytes, 256 * 16), 1, kMaxGridStrideBlocks);
  return Launch{{unsigned(blocks), 1, 1}, {256, 1, 1}, 0};
}

struct Identity {
  template <class V> VTC_HD V operator()(V v) const { return v; }
};

// copy_transposed's tile: kTransposeTile x kTransposeTile elements of dimensions J and R-1,
// 32 x 8 threads, each moving 16 elements (64 x 64 tiles keep four times the bytes of 32 x 32
// ones in flight: the 32 x 32 tiles moved EfficientViT's 16-bit attention transposes at a third
// of the copy bandwidth).
inline constexpr int64_t kTransposeTile = 64;
inline constexpr unsigned kTransposeLanes = 32, kTransposeRows = 8;

// Tiles of `elements` elements whose dimensions J and R-1 have extents ej and el.
VTC_HD constexpr int64_t transpose_tiles(int64_t elements, int64_t ej, int64_t el) {
  return elements / (ej * el) * cdiv(ej, kTransposeTile) * cdiv(el, kTransposeTile);
}
// One tile a block, up to the grid-stride cap.
VTC_HD constexpr Launch copy_transposed_launch(int64_t elements, int64_t ej, int64_t el) {
  return Launch{
      {unsigned(clamp64(transpose_tiles(elements, ej, el), 1, kMaxGridStrideBlocks)), 1, 1},
      {kTransposeLanes, kTransposeRows, 1},
      0};
}
template <int R> VTC_HD constexpr Launch copy_transposed_launch(const MapShape<R>& s, int j) {
  return copy_transposed_launch(map_elements(s), s.extent[j], s.extent[R - 1]);
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

template <class A> inline constexpr int storage_bytes = int(sizeof(typename A::value_type));
// (Elements wider than 16 bytes do not occur.)
template <class... A> inline constexpr int max_bytes = 1;
template <class A, class... B>
inline constexpr int max_bytes<A, B...> =
    storage_bytes<A> > max_bytes<B...> ? storage_bytes<A> : max_bytes<B...>;

template <class Out, class F, class... In> inline constexpr bool raw_copy = false;
template <class Out, class In>
inline constexpr bool raw_copy<Out, Identity, In> =
    same_type<typename Out::value_type, typename In::value_type>;

// One group of V elements as vectors: the storage bits moved (raw copies, 16 bytes as
// words, 16-bit floats as a conversion round trip leaves them) or converted through float.
template <int V, class Out, class F, class... In>
__device__ VTC_INLINE void map_group_vector(const Out& out, const Index<Out::rank>& i, const F& f,
                                            const In&... in) {
  using TO = typename Out::value_type;
  if constexpr (raw_copy<Out, F, In...>) {
    constexpr int W = V * int(sizeof(TO)) / 4;
    unsigned w[W];
    load_words((in.ptr(i), ...), w);
#pragma unroll
    for (int k = 0; k < W; ++k)
      w[k] = round_trip2<TO>(w[k]);
    store_words(out.ptr(i), w);
  } else {
    float res[V];
    [&](const auto&... src) {
#pragma unroll
      for (int u = 0; u < V; ++u)
        res[u] = f(src[u]...);
    }([&](const auto& a) {
      struct Vals {
        float v[V];
        __device__ float operator[](int u) const { return v[u]; }
      } vals;
      load_floats<V>(a, i, true, 0, vals.v);
      return vals;
    }(in)...);
    store_floats<V>(out, i, true, 0, res);
  }
}

} // namespace cuda

// out[i] = f(in[i]...) for every index i of `s` (every operand of the output's rank).
template <class Out, int R, class F, class... In>
__device__ void map(Out out, MapShape<R> s, F f, In... in) {
  static_assert(Out::rank == R && ((In::rank == R) && ...), "map: operands of the shape's rank");
  using namespace cuda;
  if constexpr (R == 0) {
    if (blockIdx.x == 0 && threadIdx.x == 0) out.store(Index<0>{}, f(in.load(Index<0>{})...));
  } else {
    constexpr int widest = max_bytes<Out, In...>;
    constexpr int V = widest >= 16 ? 1 : 16 / widest; // elements per group: 16 bytes of the widest
    constexpr bool vec_ok = raw_copy<Out, F, In...>
                                ? Out::has_ptr && (In::has_ptr && ...) && Out::contig % V == 0 &&
                                      ((In::contig % V == 0) && ...) &&
                                      V * sizeof(typename Out::value_type) == 16
                                : vector_capable<Out, V> && (vector_capable<In, V> && ...);
    const int64_t inner = s.extent[R - 1];
    if (map_elements(s) == 0) return;
    const int64_t per_row = cdiv(inner, V), groups = map_elements(s) / inner * per_row;
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
      const int64_t c0 = g % per_row * V;
      Index<R> i = row_index<R>(s.extent, g / per_row);
      i[R - 1] = c0;
      if constexpr (vec_ok) {
        if (c0 + V <= inner && aligned_to(out.ptr(i), vec_align<typename Out::value_type, V>) &&
            (aligned_to(in.ptr(i), vec_align<typename In::value_type, V>) && ...)) {
          map_group_vector<V>(out, i, f, in...);
          continue;
        }
      }
      const int64_t n = min64(V, inner - c0);
      for (int64_t u = 0; u < n; ++u) {
        i[R - 1] = c0 + u;
        out.store(i, f(in.load(i)...));
      }
    }
  }
}

// The generic copy kernel: out[i] = in[i].
template <class Out, class In, int R> __device__ void copy(Out out, In in, MapShape<R> s) {
  map(out, s, Identity{}, in);
}

// The copy of a transpose: out[i] = in[i] where `in` runs along dimension J (consecutive i[J]
// are consecutive addresses) and `out` along the last. Through shared memory, a tile of 64 x 64
// elements of dimensions J and R-1 at a time: read with a warp along J, written with a warp
// along R-1, so both sides move whole transactions (the generic copy reads such an input one
// element a stride apart); each thread's 16 loads of a tile are issued before any is stored.
// Each element is stored as out.store(i, in.load(i)), as the generic copy's element path
// stores it. Launch: copy_transposed_launch(s, J).
template <int J, class Out, class In, int R>
__device__ void copy_transposed(Out out, In in, MapShape<R> s) {
  static_assert(Out::rank == R && In::rank == R && J >= 0 && J < R - 1,
                "copy_transposed: J a dimension before the last");
  using namespace cuda;
  constexpr int T = int(kTransposeTile), X = int(kTransposeLanes), Y = int(kTransposeRows);
  using V = decltype(in.load(Index<R>{}));
  __shared__ V tile[T][T + 1];
  const int64_t ej = s.extent[J], el = s.extent[R - 1];
  // Tiles and the dimensions other than J and R-1 are counted in 32 bits (a 64-bit division a
  // tile cost more instructions than moving its 16 elements a thread).
  const unsigned tj = unsigned(cdiv(ej, T)), tl = unsigned(cdiv(el, T)),
                 tiles = unsigned(transpose_tiles(map_elements(s), ej, el));
  const int x = int(threadIdx.x), y = int(threadIdx.y);
  for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {
    unsigned outer = t / (tj * tl);
    const unsigned r = t - outer * (tj * tl);
    const int64_t j0 = int64_t(r / tl) * T, l0 = int64_t(r % tl) * T;
    Index<R> i{};
#pragma unroll
    for (int d = R - 2; d >= 0; --d)
      if (d != J) {
        const unsigned e = unsigned(s.extent[d]);
        i[d] = outer % e;
        outer /= e;
      }
      // (Loops of fixed trip counts, so that they unroll and the loads go out together.)
#pragma unroll
    for (int a = 0; a < T / Y; ++a) // rows of the tile along J
#pragma unroll
      for (int b = 0; b < T / X; ++b) {
        const int k = y + a * Y, h = x + b * X;
        i[J] = j0 + h;
        i[R - 1] = l0 + k;
        if (i[J] < ej && i[R - 1] < el) tile[k][h] = in.load(i);
      }
    __syncthreads();
#pragma unroll
    for (int a = 0; a < T / Y; ++a) // rows along R-1
#pragma unroll
      for (int b = 0; b < T / X; ++b) {
        const int k = y + a * Y, h = x + b * X;
        i[J] = j0 + k;
        i[R - 1] = l0 + h;
        if (i[J] < ej && i[R - 1] < el) out.store(i, tile[h][k]);
      }
    __syncthreads();
  }
}

// `bytes` bytes from `src` to `dst` (a constant into an output buffer): 16-byte words when
// both addresses allow, else bytes. Launch: copy_bytes_launch.
__device__ inline void copy_bytes(void* dst, const void* src, int64_t bytes) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if ((reinterpret_cast<unsigned long long>(d) | reinterpret_cast<unsigned long long>(s)) % 16 ==
      0) {
    const int64_t words = bytes / 16;
    for (int64_t w = first; w < words; w += stride)
      reinterpret_cast<uint4*>(d)[w] = reinterpret_cast<const uint4*>(s)[w];
    for (int64_t b = words * 16 + first; b < bytes; b += stride)
      d[b] = s[b];
  } else {
    for (int64_t b = first; b < bytes; b += stride)
      d[b] = s[b];
  }
}

} // namespace vtc::kernels

#endif
