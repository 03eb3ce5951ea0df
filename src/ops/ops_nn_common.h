// Helpers shared by the neural-network compute op files (ops_nn_*.cpp): the per-file
// registration entry points, element access in double or in wrapping int64, dtype and rank
// checks that name the node, the outer x axis x inner view used by every op that works along
// one axis, and the sliding-window geometry (kernel, strides, dilations, pads, auto_pad,
// ceil_mode) that Conv, ConvTranspose and the pooling ops share.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/op_registry.h"
#include "vtc/error.h"

namespace vtc::nn {

void register_matmul_ops(OpTable& t);  // MatMul, Gemm
void register_conv_ops(OpTable& t);    // Conv, ConvTranspose
void register_pool_ops(OpTable& t);    // MaxPool, AveragePool, Global*Pool, LRN
void register_norm_ops(OpTable& t);    // Batch/Instance/Layer/GroupNormalization, Dropout
void register_softmax_ops(OpTable& t); // Softmax, LogSoftmax, Hardmax
void register_reduce_ops(OpTable& t);  // Reduce*, ArgMax, ArgMin
void register_scan_ops(OpTable& t);    // CumSum, TopK, Trilu
void register_resize_ops(OpTable& t);  // Resize

// Element values as double (any dtype) or as int64 (integers and bool). Float work is done in
// double and rounded once on store; integer work is done in int64 and truncated on store.
std::vector<double> load_f64(const Tensor& t);
std::vector<int64_t> load_i64(const Tensor& t);
void store_f64(Tensor& t, const std::vector<double>& v);
void store_i64(Tensor& t, const std::vector<int64_t>& v);

template <typename V> std::vector<V> load_values(const Tensor& t) {
  if constexpr (std::is_same_v<V, double>)
    return load_f64(t);
  else
    return load_i64(t);
}
template <typename V> void store_values(Tensor& t, const std::vector<V>& v) {
  if constexpr (std::is_same_v<V, double>)
    store_f64(t, v);
  else
    store_i64(t, v);
}

// a + b and a * b; on int64 they wrap (two's complement) instead of overflowing.
template <typename V> V wrap_add(V a, V b) {
  if constexpr (std::is_same_v<V, double>)
    return a + b;
  else
    return V(uint64_t(a) + uint64_t(b));
}
template <typename V> V wrap_mul(V a, V b) {
  if constexpr (std::is_same_v<V, double>)
    return a * b;
  else
    return V(uint64_t(a) * uint64_t(b));
}

// v truncated toward zero and saturated to the int64 range (NaN -> 0).
int64_t f64_to_i64(double v);

// Checks naming the node; `what` names the operand ("input X", "scale", ...).
void check_float(const Node& node, const TensorType& t, const char* what);
void check_numeric(const Node& node, const TensorType& t, const char* what); // any but bool
void check_same_dtype(const Node& node, const TensorType& a, const TensorType& b,
                      const char* what_b);
void check_rank_at_least(const Node& node, const TensorType& t, int rank, const char* what);
void check_input_count(const InferInputs& in, size_t min, size_t max);
void check_output_count(const Node& node, size_t min, size_t max);

// ONNX TensorProto data type code (1 = float, 10 = float16, 11 = double, 16 = bfloat16, ...).
DType dtype_from_onnx(const Node& node, int64_t code, const char* what);

// Advances a row-major multi-index over `shape` (wrapping to all zeros after the last).
void next_index(std::vector<int64_t>& idx, const Shape& shape);

// A tensor seen as [outer, len, inner] around `axis`: element (o, a, i) is at
// (o * len + a) * inner + i.
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
  int64_t at(int64_t o, int64_t a, int64_t i) const { return (o * len + a) * inner + i; }
};
AxisView axis_view(const Shape& s, int64_t axis);

// Whether `s` broadcasts onto `target` without changing it (numpy rules, `s` right-aligned).
bool broadcasts_onto(const Shape& s, const Shape& target);

// For every element of `out` (row-major), the flat index of the element of `in` that numpy
// broadcasting maps onto it (`in` right-aligned, size-1 dims repeated). `in` must broadcast.
std::vector<int64_t> broadcast_index_map(const Shape& out, const Shape& in);

// Sliding windows over the spatial dims of an [N, C, spatial...] tensor.
struct Window {
  Shape in, kernel, strides, dilations, pad_begin, pad_end, out;
  int64_t in_numel() const { return shape_numel(in); }
  int64_t out_numel() const { return shape_numel(out); }
  int64_t kernel_numel() const { return shape_numel(kernel); }
};

// Reads strides, dilations, pads, auto_pad (NOTSET, VALID, SAME_UPPER, SAME_LOWER) and, when
// `allow_ceil_mode`, ceil_mode from the node and computes pads and the output spatial shape.
Window make_window(const Node& node, const Shape& in_spatial, const Shape& kernel,
                   bool allow_ceil_mode);

// A kernel position whose input position falls inside the input (flat, row-major indices).
struct Tap {
  int64_t kernel_pos;
  int64_t in_pos;
};
// Calls fn(out_pos, taps, padded_count) for every output position in row-major order, where
// taps are the kernel positions that land inside the input and padded_count is the number of
// kernel positions that land inside the input extended by its explicit pads.
void for_each_window(const Window& w,
                     const std::function<void(int64_t, const std::vector<Tap>&, int64_t)>& fn);

} // namespace vtc::nn
