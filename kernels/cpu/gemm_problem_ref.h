// A Problem of gemm_core.h seen through function pointers: what the engine takes, so that it
// is compiled once per register tile (compute type, MR, NV, tail width) in a translation unit
// rather than once per Problem. Every generated kernel's accessors make Problem types of their
// own, and the engine instantiated for each was most of a convolution's compile time (about
// 1.5 s of 2.7 at -O3). Each pointer is called once per row, row block or panel group, never
// per element, so the calls cost nothing measurable; the arithmetic is the engine's and the
// Problem's, unchanged, so the bits are too.
#pragma once

#include <cstdint>
#include <type_traits>

namespace vtc::kernels {

// The put(k, row) that a Problem's for_each_b_row calls for every row it hands over.
template <typename C> struct GemmRowSink {
  void* context;
  void (*fn)(void* context, int64_t k, const C* row);
  void operator()(int64_t k, const C* row) const { fn(context, k, row); }
};

// The members of gemm_core.h's Problem contract, for the engine's panels of NR columns. The
// optional ones are null (false, 1) where the Problem lacks them. A's members take a_problem,
// B's b_problem, C's problem: the same object unless the Problem names sources of its own.
template <typename C> struct GemmProblemRef {
  const void* problem = nullptr;
  const void* a_problem = nullptr;
  const void* b_problem = nullptr;
  void (*load_a_row)(const void*, int64_t b, int64_t m, int64_t k0, int64_t kc, C* dst) = nullptr;
  void (*load_b_row)(const void*, int64_t b, int64_t k, int64_t n0, int64_t nc, C* dst) = nullptr;
  void (*store_c_row)(const void*, int64_t b, int64_t m, int64_t n0, int64_t nc,
                      const C* src) = nullptr;
  void (*prefetch_b_row)(const void*, int64_t b, int64_t k, int64_t n0, int64_t nc) = nullptr;
  int64_t b_row_group = 1;
  void (*for_each_b_row)(const void*, int64_t b, int64_t k0, int64_t k1,
                         GemmRowSink<C> put) = nullptr;
  bool packs_b_panels = false;
  void (*pack_b_panels)(const void*, int64_t b, int64_t k0, int64_t k1, C* panels,
                        int64_t panel_stride) = nullptr;
  void (*store_c_block)(const void*, int64_t b, int64_t m0, int64_t mc, int64_t n0, int64_t nc,
                        const C* src, int64_t ldc) = nullptr;
  const C* (*b_row_in_place)(const void*, int64_t b, int64_t k) = nullptr;
};

// The Problem's members as functions of a type-erased pointer to it: what a GemmProblemRef
// holds (and pack_a_whole calls).
template <typename C, typename Problem> struct GemmThunks {
  static const Problem& of(const void* q) { return *static_cast<const Problem*>(q); }
  static void load_a_row(const void* q, int64_t b, int64_t m, int64_t k0, int64_t kc, C* dst) {
    of(q).load_a_row(b, m, k0, kc, dst);
  }
  static void load_b_row(const void* q, int64_t b, int64_t k, int64_t n0, int64_t nc, C* dst) {
    of(q).load_b_row(b, k, n0, nc, dst);
  }
  static void store_c_row(const void* q, int64_t b, int64_t m, int64_t n0, int64_t nc,
                          const C* src) {
    of(q).store_c_row(b, m, n0, nc, src);
  }
  static void prefetch_b_row(const void* q, int64_t b, int64_t k, int64_t n0, int64_t nc) {
    of(q).prefetch_b_row(b, k, n0, nc);
  }
  static void for_each_b_row(const void* q, int64_t b, int64_t k0, int64_t k1, GemmRowSink<C> put) {
    of(q).for_each_b_row(b, k0, k1, put);
  }
  template <int NR>
  static void pack_b_panels(const void* q, int64_t b, int64_t k0, int64_t k1, C* panels,
                            int64_t panel_stride) {
    of(q).template pack_b_panels<NR>(b, k0, k1, panels, panel_stride);
  }
  static void store_c_block(const void* q, int64_t b, int64_t m0, int64_t mc, int64_t n0,
                            int64_t nc, const C* src, int64_t ldc) {
    of(q).store_c_block(b, m0, mc, n0, nc, src, ldc);
  }
  static const C* b_row_in_place(const void* q, int64_t b, int64_t k) {
    return of(q).b_row_in_place(b, k);
  }
};

// The objects whose members are A's and B's: p.a_source() and p.b_source() where the Problem
// has them (the operand's loaders then instantiated per source type, shared by every Problem
// reading the same kind of operand), else p itself.
template <typename Problem> const auto& a_source_of(const Problem& p) {
  if constexpr (requires { p.a_source(); })
    return p.a_source();
  else
    return p;
}
template <typename Problem> const auto& b_source_of(const Problem& p) {
  if constexpr (requires { p.b_source(); })
    return p.b_source();
  else
    return p;
}

// `p` behind a GemmProblemRef for panels of NR columns; `p` must outlive the result.
template <typename C, int NR, typename Problem>
GemmProblemRef<C> gemm_problem_ref(const Problem& p) {
  using T = GemmThunks<C, Problem>;
  const auto& a_src = a_source_of(p);
  const auto& src = b_source_of(p); // B's, whose members most of what follows asks for
  using TA = GemmThunks<C, std::remove_cvref_t<decltype(a_src)>>;
  using TB = GemmThunks<C, std::remove_cvref_t<decltype(src)>>;
  GemmProblemRef<C> r;
  r.problem = &p;
  r.a_problem = &a_src;
  r.b_problem = &src;
  r.load_a_row = &TA::load_a_row;
  r.load_b_row = &TB::load_b_row;
  r.store_c_row = &T::store_c_row;
  if constexpr (requires { src.prefetch_b_row(int64_t(0), int64_t(0), int64_t(0), int64_t(0)); })
    r.prefetch_b_row = &TB::prefetch_b_row;
  if constexpr (requires {
                  src.for_each_b_row(int64_t(0), int64_t(0), int64_t(0), GemmRowSink<C>{});
                }) {
    r.b_row_group = src.b_row_group();
    r.for_each_b_row = &TB::for_each_b_row;
  }
  if constexpr (requires {
                  src.template pack_b_panels<NR>(int64_t(0), int64_t(0), int64_t(0), (C*)nullptr,
                                                 int64_t(0));
                })
    r.pack_b_panels = &TB::template pack_b_panels<NR>;
  if constexpr (requires { src.packs_b_panels(); }) r.packs_b_panels = src.packs_b_panels();
  if constexpr (requires {
                  p.store_c_block(int64_t(0), int64_t(0), int64_t(0), int64_t(0), int64_t(0),
                                  (const C*)nullptr, int64_t(0));
                })
    r.store_c_block = &T::store_c_block;
  if constexpr (requires { src.b_row_in_place(int64_t(0), int64_t(0)); })
    r.b_row_in_place = &TB::b_row_in_place;
  return r;
}

} // namespace vtc::kernels
