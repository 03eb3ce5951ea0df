// The cases the cuda kernel tests run: for each kernel template, entry points instantiating it
// over test accessors (test_accessors.h) of several layouts and dtypes, each with its launch,
// its operands' storage (one or two device buffers per operand) and a double-precision
// reference of its output. Both the NVRTC compile test and the device program use them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda/common.h"

namespace vtc::cuda_test {

using kernels::Launch;

enum class DType { f32, f16, bf16 };
const char* dtype_name(DType t);
const char* cpp_type(DType t);
size_t dtype_bytes(DType t);
// A float rounded to the dtype (round to nearest even), as a float.
float round_to(DType t, float v);
// Storage bits of v (rounded) into dst; and the float of stored bits.
void store_value(DType t, float v, unsigned char* dst);
float load_value(DType t, const unsigned char* src);

// How an operand's logical tensor lies in memory:
//   dense       one row-major buffer;
//   transposed  one buffer with the last two dimensions swapped (ptr(), runs of 1);
//   concat      two buffers, split along dimension rank-2 (whole rows in each piece);
//   concat_last two buffers, split along the last dimension at a multiple of 8 (runs of 8);
//   computed    a dense buffer read through load() only (a fused prologue's view).
// channels_last: a 4-D [n, c, h, w] stored [n, h, w, c] (else dense).
enum class Layout { dense, transposed, concat, concat_last, computed, channels_last };
const char* layout_name(Layout l);

struct Operand {
  DType dtype = DType::f32;
  std::vector<int64_t> shape; // logical
  Layout layout = Layout::dense;
  int64_t head_group = 0; // > 0: read as [B, H * head_group, L, D] through HeadGroups

  int dim = 0;       // concat: the split dimension
  int64_t split = 0; // concat: extent of piece 0 along dim
  int64_t contig = int64_t(1) << 30;
  std::vector<int64_t> strides0, strides1; // logical index -> element offset per piece
  int64_t elems0 = 0, elems1 = 0;          // elements of each buffer

  int64_t numel() const;
  // The accessor's C++ expression over the entry point's parameters p0, p1.
  std::string accessor(const std::string& p0, const std::string& p1) const;
  // Logical values (row-major over shape) <-> the storage of the two buffers.
  void scatter(const std::vector<float>& logical, std::vector<unsigned char>& b0,
               std::vector<unsigned char>& b1) const;
  std::vector<float> gather(const std::vector<unsigned char>& b0,
                            const std::vector<unsigned char>& b1) const;
};

Operand make_operand(DType t, std::vector<int64_t> shape, Layout l = Layout::dense);

// Inputs as logical float values (already rounded to their dtypes), operands 1.. of a case.
using Inputs = std::vector<std::vector<float>>;

struct Case {
  std::string family;       // the kernel
  std::string name;         // entry point, unique in its translation unit
  std::string group;        // cases of one group compute the same function: bitwise-equal outputs
  std::vector<Operand> ops; // ops[0]: the output
  std::string call;         // the kernel call; @k is operand k's accessor, `ws` the workspace
  Launch launch{};
  int64_t workspace_bytes = 0;
  double flops = 0, bytes = 0; // per launch, for rates
  double tol = 0;              // max |out - ref| / max |ref|
  float input_range = 1.0f;    // inputs uniform in [-range, range]
  // The reference value of output element `flat` (row-major over ops[0].shape).
  std::function<double(const Inputs&, int64_t flat)> ref;
};

// The source of a translation unit holding the cases' entry points.
std::string translation_unit(const std::vector<Case>& cases);

// Case builders, one per kernel (the shapes as given; layouts for the inputs and the output).
Case copy_case(DType t, Layout in, Layout out, std::vector<int64_t> shape);
// `a_shared`: the plan is told A is the same for every batch (TcPlan::a_shared), as code
// generation tells it of a convolution's weights; only where batch is 1, where that is so.
Case gemm_case(DType t, Layout in, Layout out, int64_t batch, int64_t m, int64_t n, int64_t k,
               bool a_shared = false);
Case gemv_case(DType t, Layout in, Layout out, int64_t batch, int64_t m, int64_t n, int64_t k);
// gemv_tc (kernels/cuda/gemv_tc.h): 16-bit operands on the tensor cores.
// k_chunk: the split-K chunk (0: make_gemv_tc_shape's), for timing other chunkings.
Case gemv_tc_case(DType t, Layout in, Layout out, int64_t batch, int64_t m, int64_t n, int64_t k,
                  int64_t k_chunk = 0);
Case attention_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len, int64_t d,
                    int64_t group, int64_t valid, float softcap);
// decode_attention_tiled (K and V streamed through shared memory) on attention_case's operands.
Case attention_tiled_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len,
                          int64_t d, int64_t group, int64_t valid, float softcap);
// decode_attention_stream (every warp streams its own keys into registers).
Case attention_stream_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len,
                           int64_t d, int64_t group, int64_t valid, float softcap);
// decode_attention_stream_tc (streaming warps, both products on tensor cores), 16-bit types.
Case attention_stream_tc_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len,
                              int64_t d, int64_t group, int64_t valid, float softcap);
// decode_attention_mma (both products on tensor cores), 16-bit types only.
Case attention_mma_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t kv_len, int64_t d,
                        int64_t group, int64_t valid, float softcap);
// Prefill: T queries against S keys, K and V of group-times fewer heads; with a [B,H,T,S]
// additive mask as operand 4 when `mask`.
Case prefill_attention_case(DType t, Layout in, int64_t batch, int64_t heads, int64_t q_len,
                            int64_t kv_len, int64_t d, int64_t group, float softcap, bool mask);
Case softmax_case(DType t, Layout in, Layout out, int64_t rows, int64_t d, bool log);
Case layer_norm_case(DType t, Layout in, Layout out, int64_t rows, int64_t d, bool rms);
Case reduce_case(DType t, Layout in, int64_t rows, int64_t d, const std::string& kind);
Case pool_case(DType t, Layout in, bool max, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k,
               int64_t stride, int64_t pad);
Case depthwise_case(DType t, Layout in, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k,
                    int64_t stride, int64_t pad);
// The implicit GEMM (conv2d_tc / conv2d_f32), or with `direct` conv2d_direct (few taps), its
// output stored through `out`.
Case conv_case(DType t, Layout in, int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t c_out,
               int64_t k, int64_t stride, int64_t pad, bool direct = false,
               Layout out = Layout::dense);
// library_epilogue (kernels/cuda/library_epilogue.h): a dense raw product stored through `out`,
// [n, c, h, w], or [n, h, w, c] read by library_epilogue_nhwc when `channels_last` (by
// library_epilogue_to_nhwc, in its own order, when `to_nhwc` too).
Case library_epilogue_case(DType t, Layout out, int64_t n, int64_t c, int64_t h, int64_t w,
                           bool channels_last, bool to_nhwc = false);
// library_prologue_nhwc (kernels/cuda/library_prologue.h): [n, c, h, w] read through `in`,
// staged dense [n, h, w, c].
Case library_prologue_case(DType t, Layout in, int64_t n, int64_t c, int64_t h, int64_t w);
Case upsample_case(DType t, Layout in, Layout out, int64_t n, int64_t c, int64_t h, int64_t w,
                   int64_t factor);

// Representative cases of every kernel for f32, f16 and bf16 over dense, transposed and
// two-piece inputs (and outputs where the kernel stores through a mapping), small shapes with
// ragged edges; in families of kernels, each one translation unit.
struct CaseFamily {
  std::string name;
  std::vector<Case> cases;
};
std::vector<CaseFamily> representative_cases();

// Large cases on dense operands, for timing (the paper's workloads' shapes where they have
// them); names prefixed "timed<i>_", each its own group.
std::vector<Case> timed_cases();

} // namespace vtc::cuda_test
