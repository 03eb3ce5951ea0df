// Kernel calls of window ops over [n, c, h, w] planes: 2-D convolution (with its kernel
// chosen here, so the compiler instantiates only that one: on cpu depthwise, row,
// padded-plane or implicit-GEMM; on cuda depthwise, direct for windows of few taps, or an
// implicit GEMM, on the tensor cores for 16-bit floats), a convolution and the max pooling of
// its output in one kernel (cpu), 2-D max and average pooling, and global pooling (on cuda a
// row reduction). 1-D convolutions and poolings ([n, c, w]) are the 2-D ones over a plane of
// height 1: their operands are read and written through views that insert the unit dimension.
#include <cstdlib>
#include <string>

#include "codegen/elementwise_expr.h"
#include "codegen/kernel_calls.h"
#include "kernels/cpu/conv_shape.h"
#include "kernels/cuda/conv.h"
#include "kernels/cuda/conv_direct.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemm_tc.h"
#include "kernels/cuda/library_epilogue.h"
#include "kernels/cuda/library_prologue.h"
#include "kernels/cuda/pointwise_tc.h"
#include "kernels/cuda/pool.h"
#include "mapping/flat_plane.h"
#include "passes/fusion.h"
#include "vtc/error.h"

namespace vtc {

namespace {

// A shape [n, c, w] as [n, c, 1, w]; a 4-D shape as it is.
Shape plane_shape(const Shape& s) {
  return s.size() == 3 ? Shape{s[0], s[1], 1, s[2]} : s;
}

// A window attribute (kernel_shape, strides, dilations) of a 1-D or 2-D op, as 2-D: a 1-D op's
// [v] as [1, v]; absent, `fallback` per spatial dimension.
std::vector<int64_t> plane_attr(const Node& n, const char* name, int64_t fallback) {
  const bool one_d = n.inputs[0]->type.rank() == 3;
  std::vector<int64_t> v = n.attr_ints(name, one_d ? std::vector<int64_t>{fallback}
                                                   : std::vector<int64_t>{fallback, fallback});
  if (one_d && v.size() == 1) v.insert(v.begin(), 1);
  return v;
}

// The view of a 3-D operand [n, c, w] (or [c_out, c_in, k]) as 4-D with a unit third
// dimension; a 4-D operand as it is.
Acc plane_view(AccessorEmitter& g, const Acc& a) {
  if (a.rank != 3) return a;
  return g.view(a, 4, {IndexTerm::dim(0), IndexTerm::dim(1), IndexTerm::dim(3)}, true);
}

// Pads (top, left, bottom, right) of a 1-D or 2-D window op from `pads` or `auto_pad` (a 1-D
// op's [begin, end] as [0, begin, 0, end]); `in` and `out` as plane_shape gives them.
std::array<int64_t, 4> window_pads(const Node& n, const Shape& in, const Shape& out,
                                   const std::vector<int64_t>& k, const std::vector<int64_t>& st,
                                   const std::vector<int64_t>& dil) {
  std::string mode = n.attr_string("auto_pad", "NOTSET");
  if (mode == "NOTSET") {
    const bool one_d = n.inputs[0]->type.rank() == 3;
    auto p = n.attr_ints("pads", std::vector<int64_t>(one_d ? 2 : 4, 0));
    if (one_d && p.size() == 2) return {0, p[0], 0, p[1]};
    VTC_CHECK(p.size() == 4) << n.describe() << ": expected 4 pads";
    return {p[0], p[1], p[2], p[3]};
  }
  if (mode == "VALID") return {0, 0, 0, 0};
  std::array<int64_t, 4> pads{};
  for (int d = 0; d < 2; ++d) {
    int64_t total =
        std::max<int64_t>(0, (out[size_t(d + 2)] - 1) * st[size_t(d)] +
                                 (k[size_t(d)] - 1) * dil[size_t(d)] + 1 - in[size_t(d + 2)]);
    int64_t small = total / 2, big = total - small;
    pads[size_t(d)] = mode == "SAME_UPPER" ? small : big;
    pads[size_t(d + 2)] = mode == "SAME_UPPER" ? big : small;
  }
  return pads;
}

// The window of a 2-D MaxPool or AveragePool (kernels' Pool2dShape). Ceil mode is in the output
// size shape inference gave: the last windows then run past the bottom / right padding, and the
// kernels count those taps nowhere (neither in a max nor in an average's divisor), as ONNX and
// PyTorch do.
struct PoolWindow {
  int64_t n, c, h, w, h_out, w_out, kh, kw, stride_h, stride_w, dil_h, dil_w;
  std::array<int64_t, 4> pads;

  kernels::Pool2dShape shape() const {
    return {n,        c,        h,     w,     h_out,   w_out,   kh,      kw,
            stride_h, stride_w, dil_h, dil_w, pads[0], pads[1], pads[2], pads[3]};
  }

  std::string text() const {
    return "Pool2dShape{" + std::to_string(n) + ", " + std::to_string(c) + ", " +
           std::to_string(h) + ", " + std::to_string(w) + ", " + std::to_string(h_out) + ", " +
           std::to_string(w_out) + ", " + std::to_string(kh) + ", " + std::to_string(kw) + ", " +
           std::to_string(stride_h) + ", " + std::to_string(stride_w) + ", " +
           std::to_string(dil_h) + ", " + std::to_string(dil_w) + ", " + std::to_string(pads[0]) +
           ", " + std::to_string(pads[1]) + ", " + std::to_string(pads[2]) + ", " +
           std::to_string(pads[3]) + "}";
  }
};

std::optional<PoolWindow> pool_window(const Node& n) {
  const Shape sx = plane_shape(n.inputs[0]->type.shape);
  const Shape so = plane_shape(n.outputs[0]->type.shape);
  if (sx.size() != 4) return std::nullopt;
  auto k = plane_attr(n, "kernel_shape", 0), st = plane_attr(n, "strides", 1),
       dil = plane_attr(n, "dilations", 1);
  if (k.size() != 2 || st.size() != 2 || dil.size() != 2) return std::nullopt;
  return PoolWindow{sx[0],
                    sx[1],
                    sx[2],
                    sx[3],
                    so[2],
                    so[3],
                    k[0],
                    k[1],
                    st[0],
                    st[1],
                    dil[0],
                    dil[1],
                    window_pads(n, sx, so, k, st, dil)};
}

std::string conv_shape_text(const kernels::Conv2dShape& cs) {
  std::string s = "Conv2dShape{";
  const int64_t fields[] = {cs.n,     cs.c_in,  cs.h,       cs.w,       cs.c_out,    cs.h_out,
                            cs.w_out, cs.kh,    cs.kw,      cs.groups,  cs.stride_h, cs.stride_w,
                            cs.dil_h, cs.dil_w, cs.pad_top, cs.pad_left};
  for (size_t i = 0; i < std::size(fields); ++i)
    s += (i ? ", " : "") + std::to_string(fields[i]);
  return s + "}";
}

// $VTC_CUDA_POINTWISE_TC=0: pointwise convolutions of few input channels on gemm_tc, as before
// pointwise_tc (to compare).
bool pointwise_tc_allowed() {
  const char* v = std::getenv("VTC_CUDA_POINTWISE_TC");
  return !(v && std::string(v) == "0");
}

bool tensor_core_pair(DType a, DType b) {
  return a == b && (a == DType::f16 || a == DType::bf16);
}

// A convolution on cuda: depthwise, a pointwise one of 16-bit operands as a GEMM over the
// image's planes, a window of few taps directly, or the implicit GEMM over the weights as
// [c_out, K].
std::vector<KernelCall> cuda_conv(KernelContext& c, const Node& n, const kernels::Conv2dShape& cs,
                                  const Acc& out, const Acc& x, const Acc& w4) {
  AccessorEmitter& g = c.g;
  const Value* w = n.inputs[1];
  if (cs.c_in / cs.groups == 1 && cs.groups > 1) {
    KernelCall call{"depthwise_conv2d", {}, {out.init, x.init, w4.init, conv_shape_text(cs)}};
    call.launch = kernels::depthwise_conv2d_launch(cs);
    return {call};
  }
  const bool tc = tensor_core_pair(n.inputs[0]->type.dtype, w->type.dtype);
  if (tc && kernels::pointwise_conv2d(cs)) {
    // A pointwise convolution is the product W [c_out, c_in] . x [c_in, h*w] for each image:
    // gemm_tc reads x's planes as rows (cp.async where aligned) instead of gathering the
    // implicit GEMM's columns element by element.
    const IndexTerm i0 = IndexTerm::dim(0), i1 = IndexTerm::dim(1), i2 = IndexTerm::dim(2);
    IndexTerms xi{i0, i1}, yi{i0, i1};
    for (const IndexTerm& t : unflatten(2, {cs.h, cs.w})) {
      xi.push_back(t);
      yi.push_back(t);
    }
    // A dense constant's rows [c_out, c_in, 1, 1] are runs of c_in: cp.async where aligned.
    const bool dense = w->constant.has_value() && g.physical(w);
    Acc a =
        g.view(w4, 3, {i1, i2, IndexTerm::zero(), IndexTerm::zero()}, dense, dense ? cs.c_in : 0);
    Acc b = g.view(x, 3, xi, true);
    Acc y = g.view(out, 3, yi, true);
    if (kernels::pointwise_tc_takes(cs) && pointwise_tc_allowed()) {
      // Few input channels over many pixels: the product streams X once and stores Y
      // straight from the accumulators.
      const kernels::PointwisePlan few = kernels::pointwise_plan(cs);
      KernelCall call{"pointwise_tc",
                      {std::to_string(kernels::pointwise_m_tiles(few.m)),
                       std::to_string(kernels::pointwise_k_steps(few.k))},
                      {y.init, a.init, b.init,
                       "PointwisePlan{" + std::to_string(few.batch) + ", " + std::to_string(few.m) +
                           ", " + std::to_string(few.n) + ", " + std::to_string(few.k) + "}"}};
      call.launch = kernels::pointwise_tc_launch(few);
      return {call};
    }
    // The convolution's own plan: the GEMM's shape, and its weights shared by every image.
    return {tc_call("gemm_tc", {y.init, a.init, b.init}, kernels::conv2d_tc_plan(cs))};
  }
  IndexTerms wi{IndexTerm::dim(0)};
  for (const IndexTerm& t : unflatten(1, {cs.c_in / cs.groups, cs.kh, cs.kw}))
    wi.push_back(t);
  // A dense constant's rows [c_in / groups, kh, kw] are runs of K (cp.async where aligned); a
  // constant otherwise keeps its accessor's runs along the flattened (ci, r, s).
  const bool dense = w->constant.has_value() && g.physical(w);
  Acc w2 = g.view(w4, 2, wi, w->constant.has_value() && !g.inside.count(w),
                  dense ? cs.c_in / cs.groups * cs.kh * cs.kw : 0);
  if (kernels::conv2d_direct_fits(cs)) {
    // A window of few taps (a stem over an image's 3 channels): a pixel a thread.
    KernelCall call{"conv2d_direct",
                    {std::to_string(cs.c_in), std::to_string(cs.kh), std::to_string(cs.kw)},
                    {out.init, x.init, w2.init, conv_shape_text(cs)}};
    call.launch = kernels::conv2d_direct_launch(cs);
    return {call};
  }
  if (tc)
    return {tc_call("conv2d_tc", {out.init, x.init, w2.init}, kernels::conv2d_tc_plan(cs),
                    conv_shape_text(cs))};
  KernelCall call{"conv2d_f32", {}, {out.init, x.init, w2.init, conv_shape_text(cs)}};
  call.launch = kernels::conv2d_f32_launch(cs);
  return {call};
}

} // namespace

std::optional<kernels::Conv2dShape> conv2d_shape(const Node& n) {
  const Shape sx = plane_shape(n.inputs[0]->type.shape);
  const Shape sw = plane_shape(n.inputs[1]->type.shape);
  const Shape so = plane_shape(n.outputs[0]->type.shape);
  if (sx.size() != 4 || sw.size() != 4 || so.size() != 4) return std::nullopt;
  auto st = plane_attr(n, "strides", 1), dil = plane_attr(n, "dilations", 1);
  if (st.size() != 2 || dil.size() != 2) return std::nullopt;
  auto pads = window_pads(n, sx, so, {sw[2], sw[3]}, st, dil);
  return kernels::Conv2dShape{
      sx[0], sx[1], sx[2],  sx[3],  so[1],   so[2],  so[3], sw[2], sw[3], n.attr_int("group", 1),
      st[0], st[1], dil[0], dil[1], pads[0], pads[1]};
}

bool cpu_conv_runs_winograd(const Node& conv, const kernels::Conv2dShape& s) {
  const char* env = std::getenv("VTC_CPU_WINOGRAD");
  if (env && std::string(env) == "0") return false;
  for (const Value* v : conv.inputs)
    if (v && v->type.dtype != DType::f32) return false;
  return conv.outputs[0]->type.dtype == DType::f32 && kernels::winograd_conv_fits(s);
}

namespace {

// The buffer the library may write a convolution's raw product to instead of the scratch: the
// kernel's one output where it is an intermediate of its own (an arena buffer: its address is
// the same every run, so a replayed graph may keep it) of the product's type and size, laid out
// as the product is (dense NCHW for an NCHW product, held channels-last for an NHWC one, whose
// epilogue is then library_epilogue_to_nhwc), so that the epilogue reads and stores each value
// at the same address. -1: none (the scratch, which the largest such product sizes).
int library_conv_product_buffer(const KernelContext& c, const LibraryConvShape& form,
                                bool channels_last) {
  const Kernel& k = c.kernel;
  if (k.outputs.size() != 1) return -1;
  const Value* y = k.outputs[0];
  const StorageMap& storage = c.g.storage();
  if (y->is_graph_input || y->is_graph_output || !storage.buffer_of.count(y) ||
      storage.virtual_values.count(y) || (storage.channels_last.count(y) != 0) != channels_last)
    return -1;
  if (y->type.dtype != form.dtype || y->type.numel() != form.output_elements()) return -1;
  return storage.buffer_of.at(y);
}

// A convolution through cuDNN or cuBLASLt: channels-last on cuDNN with an input not held
// channels-last, first the generated prologue staging the input NHWC (library_prologue_nhwc,
// reading it through its accessor: physical, bound or virtual); then the library call (its raw
// product into the step's scratch, NHWC from cuDNN channels-last, else NCHW), then the
// generated epilogue storing it through `out` (over `cs`'s output, whose planes may be
// flattened: the scratch is dense either way): in the raw product's order where the output is
// held channels-last too (library_epilogue_to_nhwc), else turned around through shared memory.
std::vector<KernelCall> library_conv_calls(KernelContext& c, const Acc& out,
                                           const kernels::Conv2dShape& cs) {
  const Kernel& k = c.kernel;
  std::optional<LibraryConvShape> form = library_conv_form(k);
  VTC_CHECK(form) << k.name << ": no library computes it";
  const bool cublaslt = k.impl == KernelImpl::cublaslt_conv;
  KernelCall library{cublaslt ? "cublasLtMatmul" : "cudnnConvolutionForward", {}, {}};
  const bool channels_last = !cublaslt && cudnn_channels_last(form->shape);
  const Value* x = k.anchor->inputs[0];
  const bool input_held = c.g.channels_last(x), output_held = c.g.channels_last(k.outputs[0]);
  VTC_CHECK(channels_last || (!input_held && !output_held))
      << k.name << ": a tensor held channels-last is an operand of an NCHW convolution";
  const bool staged = channels_last && !input_held;
  library.library_conv = LibraryConvCall{*form,
                                         staged ? -1 : c.g.physical_buffer(x),
                                         c.g.physical_buffer(k.anchor->inputs[1]),
                                         k.impl,
                                         channels_last,
                                         input_held,
                                         staged,
                                         library_conv_product_buffer(c, *form, channels_last)};
  library.launch = kernels::Launch{};
  const kernels::Index<4> extent{cs.n, cs.c_out, cs.h_out, cs.w_out};
  const std::string type = cpp_storage_type(form->dtype);
  std::vector<KernelCall> calls;
  if (staged) {
    KernelCall prologue{"library_prologue_nhwc",
                        {},
                        {plane_view(c.g, c.g.value(x)).init, "static_cast<" + type + "*>(ws)",
                         shape_array({cs.n, cs.c_in, cs.h, cs.w})}};
    prologue.launch = kernels::channel_tiles_launch({cs.n, cs.c_in, cs.h, cs.w});
    prologue.writes_staging = true;
    calls.push_back(std::move(prologue));
  }
  const char* name = output_held     ? "library_epilogue_to_nhwc"
                     : channels_last ? "library_epilogue_nhwc"
                                     : "library_epilogue";
  KernelCall epilogue{name,
                      {},
                      {out.init, "static_cast<const " + type + "*>(ws)",
                       shape_array({cs.n, cs.c_out, cs.h_out, cs.w_out})}};
  epilogue.launch = channels_last && !output_held ? kernels::channel_tiles_launch(extent)
                                                  : kernels::library_epilogue_launch(extent);
  calls.push_back(std::move(library));
  calls.push_back(std::move(epilogue));
  return calls;
}

// Whether the kernel reads or writes a value held channels-last.
bool touches_channels_last(const KernelContext& c) {
  for (const Node* n : c.kernel.nodes)
    for (const Value* v : n->inputs)
      if (v && c.g.channels_last(v)) return true;
  for (const Value* v : c.kernel.outputs)
    if (c.g.channels_last(v)) return true;
  return false;
}

// A convolution whose input or output lies channels-last (cpu_layouts.h), on
// kernels/cpu/conv_nhwc.h: its output, input and epilogue operands read and written in
// channels-last index order [n, h, w, c] (the bias at i[3]), the weights as they lie; a
// groups-1 convolution with its tile and staged geometry at compile time, a depthwise one.
std::vector<KernelCall> channels_last_conv(KernelContext& c, const Node& n) {
  AccessorEmitter& g = c.g;
  const std::optional<kernels::Conv2dShape> shape = conv2d_shape(n);
  VTC_CHECK(shape) << n.describe() << ": not a 2-D convolution";
  const kernels::Conv2dShape& cs = *shape;
  const Value* w = n.inputs[1];
  // depthwise_nhwc reads and writes channels-last index order only (a tensor not held so
  // through its channels-last view); conv2d_nhwc takes either order for each.
  const bool depthwise = cs.groups > 1;
  const bool in_channels_last = g.channels_last(n.inputs[0]) || depthwise;
  // An output not held channels-last is stored a channel's row of the tile at a time where
  // those rows are long enough for runs, else a position's channels at a time.
  const kernels::ChannelTile tile = kernels::channel_form_tile(cs.h_out, cs.w_out);
  const bool out_channels_last =
      g.channels_last(c.kernel.outputs[0]) || depthwise || tile.x < kernels::kNhwcMinChannelRow;
  Acc out, x;
  {
    g.channels_last_index = out_channels_last;
    PostOp post;
    if (n.input(2)) {
      post.operands.push_back({g.value(n.inputs[2]), {IndexTerm::dim(out_channels_last ? 3 : 1)}});
      post.expr = [](const std::vector<std::string>& b) { return "(v + " + b[0] + ")"; };
    }
    out = c.output(post);
    g.channels_last_index = in_channels_last;
    if (in_channels_last) x = g.value(n.inputs[0]);
    g.channels_last_index = false;
  }
  // conv2d_nhwc's input not held channels-last is read in its own order, channel rows as runs.
  if (!in_channels_last)
    x = g.physical(n.inputs[0]) ? g.dense(n.inputs[0], {cs.n, cs.c_in, cs.h, cs.w})
                                : g.value(n.inputs[0]);
  const Acc weights =
      g.physical(w) ? g.dense(w, {cs.c_out, cs.c_in / cs.groups, cs.kh, cs.kw}) : g.value(w);
  std::vector<std::string> args{out.init,       x.init,           weights.init, conv_shape_text(cs),
                                "NoEpilogue{}", g.constant_ref(w)};
  if (depthwise) return {{"depthwise_nhwc", {}, args}};
  const kernels::NhwcStaging staged = kernels::nhwc_staging(cs, tile);
  return {{"conv2d_nhwc",
           {std::to_string(tile.x), std::to_string(tile.y),
            std::to_string(kernels::nhwc_channel_vectors(tile, cs.c_out)), std::to_string(cs.c_in),
            std::to_string(staged.pitch), std::to_string(cs.stride_h), std::to_string(cs.stride_w),
            in_channels_last ? "true" : "false", out_channels_last ? "true" : "false"},
           args}};
}

std::vector<KernelCall> conv(KernelContext& c, const Node& n) {
  AccessorEmitter& g = c.g;
  const Shape sx = plane_shape(n.inputs[0]->type.shape);
  const Shape sw = plane_shape(n.inputs[1]->type.shape);
  const Shape so = plane_shape(n.outputs[0]->type.shape);
  auto st = plane_attr(n, "strides", 1), dil = plane_attr(n, "dilations", 1);
  auto pads = window_pads(n, sx, so, {sw[2], sw[3]}, st, dil);
  const Node* pool = max_pool_tail(c.kernel);
  const bool cuda = g.dialect().library() == KernelLibrary::cuda;
  // On cpu, where a value it reads or writes lies channels-last (cpu_layouts.h), its
  // channels-last form: a residual read in NCHW order from a channels-last tensor would be
  // one scattered load an element.
  if (!cuda && touches_channels_last(c)) return channels_last_conv(c, n);
  // A pointwise convolution runs over its planes flattened to one row when it can.
  const bool pointwise = sw[2] == 1 && sw[3] == 1 && st == std::vector<int64_t>{1, 1} &&
                         pads == std::array<int64_t, 4>{0, 0, 0, 0};
  std::optional<KernelContext::FlatPlaneScope> flat;
  const bool one_d = n.inputs[0]->type.rank() == 3;
  if (pointwise && !pool && !one_d && c.plane_flattens(so[2], so[3], 1))
    flat.emplace(g, so[2], so[3]);
  const int64_t h = flat ? 1 : sx[2], w = flat ? sx[2] * sx[3] : sx[3];
  const int64_t ho = flat ? 1 : so[2], wo = flat ? so[2] * so[3] : so[3];
  const int64_t groups = n.attr_int("group", 1);
  const kernels::Conv2dShape cs{sx[0], sx[1],  h,     w,     so[1],  ho,     wo,      sw[2],
                                sw[3], groups, st[0], st[1], dil[0], dil[1], pads[0], pads[1]};
  PostOp post;
  if (n.input(2)) {
    post.operands.push_back({g.value(n.inputs[2]), {IndexTerm::dim(1)}});
    post.expr = [](const std::vector<std::string>& b) { return "(v + " + b[0] + ")"; };
  }
  if (pool) {
    // The epilogue chain stored into a row buffer, pooled from there (conv_max_pool.h).
    const std::optional<PoolWindow> pw = pool_window(*pool);
    VTC_CHECK(pw) << pool->describe() << ": not a 2-D window";
    const std::string rows =
        "ConvRowBuffer{" + std::to_string(cs.c_out) + ", " + std::to_string(cs.w_out) + "}";
    const Acc rows_acc{"ConvRowBuffer", rows, 4};
    return {{"conv2d_max_pool",
             {},
             {g.stored(pool->outputs[0]).init, c.output(post, &rows_acc).init, rows,
              g.value(n.inputs[0]).init, g.value(n.inputs[1]).init, conv_shape_text(cs), pw->text(),
              g.constant_ref(n.inputs[1])}}};
  }
  Acc out = plane_view(g, c.output(post));
  if (library_conv_impl(c.kernel.impl)) return library_conv_calls(c, out, cs);
  // On cpu, dense operands as the library's DenseAccessor: the convolution's loaders are then
  // compiled once for all such convolutions of a part (conv.h's ConvInput and ConvWeights).
  auto operand = [&](const Value* v, const Shape& as) {
    return !cuda && g.physical(v) ? g.dense(v, as) : plane_view(g, g.value(v));
  };
  const Acc x = operand(n.inputs[0], {cs.n, cs.c_in, cs.h, cs.w});
  const Acc weights = operand(n.inputs[1], {cs.c_out, cs.c_in / groups, cs.kh, cs.kw});
  if (cuda) return cuda_conv(c, n, cs, out, x, weights);
  if (cpu_conv_runs_winograd(n, cs)) {
    const kernels::WinogradTile t = kernels::winograd_tile(cs.h_out, cs.w_out, cs.c_out);
    return {{"conv2d_winograd",
             {std::to_string(t.x), std::to_string(t.rows), std::to_string(t.panels)},
             {out.init, x.init, weights.init, conv_shape_text(cs), "NoEpilogue{}",
              g.constant_ref(n.inputs[1])}}};
  }
  const std::string planes = std::to_string(ho * wo);
  const std::vector<std::string> kernel =
      sx[1] / groups == 1 && groups > 1
          ? (kernels::depthwise_rows_shape_fits(cs)
                 ? std::vector<std::string>{"ConvKernel::depthwise_rows", planes, std::to_string(w)}
                 : std::vector<std::string>{"ConvKernel::depthwise_planes"})
      : kernels::conv_rows_fit(cs)
          ? std::vector<std::string>{"ConvKernel::rows", planes, std::to_string(w)}
      : kernels::direct_conv_channels_fit(cs)
          ? std::vector<std::string>{"ConvKernel::direct_channels", planes, std::to_string(wo)}
      : kernels::direct_conv_fits(cs) ? std::vector<std::string>{"ConvKernel::direct", planes}
      : kernels::padded_plane_fits(cs)
          ? std::vector<std::string>{"ConvKernel::padded_plane", planes}
      : pointwise ? std::vector<std::string>{"ConvKernel::pointwise", planes}
                  : std::vector<std::string>{"ConvKernel::implicit_gemm", planes};
  return {{"conv2d",
           kernel,
           {out.init, x.init, weights.init, conv_shape_text(cs), "NoEpilogue{}",
            g.constant_ref(n.inputs[1])}}};
}

// A max pooling whose input or output lies channels-last (cpu_layouts.h), on
// kernels/cpu/pool_nhwc.h: each side read or written in its own index order ([n, h, w, c]
// where held so, else [n, c, h, w]).
std::vector<KernelCall> channels_last_max_pool(KernelContext& c, const Node& n,
                                               const PoolWindow& pw) {
  AccessorEmitter& g = c.g;
  const bool in_channels_last = g.channels_last(n.inputs[0]);
  const bool out_channels_last = g.channels_last(c.kernel.outputs[0]);
  Acc out, x;
  g.channels_last_index = out_channels_last;
  out = c.output();
  g.channels_last_index = in_channels_last;
  x = g.value(n.inputs[0]);
  g.channels_last_index = false;
  return {{"max_pool2d_nhwc",
           {in_channels_last ? "true" : "false", out_channels_last ? "true" : "false"},
           {out.init, x.init, pw.text()}}};
}

std::vector<KernelCall> pool(KernelContext& c, const Node& n) {
  const std::optional<PoolWindow> pw = pool_window(n);
  VTC_CHECK(pw) << n.describe() << ": not a 2-D window";
  const bool cuda = c.g.dialect().library() == KernelLibrary::cuda;
  if (!cuda && n.op == "MaxPool" && touches_channels_last(c))
    return channels_last_max_pool(c, n, *pw);
  std::string in = plane_view(c.g, c.g.value(n.inputs[0])).init,
              out = plane_view(c.g, c.output()).init;
  std::vector<KernelCall> calls;
  if (n.op == "MaxPool")
    calls = {{"max_pool2d", {}, {out, in, pw->text()}}};
  else
    calls = {{"avg_pool2d",
              {},
              {out, in, pw->text(), n.attr_int("count_include_pad", 0) ? "true" : "false"}}};
  if (cuda) calls[0].launch = kernels::pool2d_launch(pw->shape());
  return calls;
}

// Global pooling on cuda: reduce<Mean / Max> over the view [n * c, h * w] into [n * c].
std::vector<KernelCall> cuda_global_pool(KernelContext& c, const Node& n) {
  AccessorEmitter& g = c.g;
  const Shape& sx = n.inputs[0]->type.shape;
  IndexTerms xi = unflatten(0, {sx[0], sx[1]});
  for (const IndexTerm& t : unflatten(1, {sx[2], sx[3]}))
    xi.push_back(t);
  Acc x = g.view(g.value(n.inputs[0]), 2, xi, false);
  IndexTerms yi = unflatten(0, {sx[0], sx[1]});
  yi.push_back(IndexTerm::zero());
  yi.push_back(IndexTerm::zero());
  Acc y = g.view(c.output(), 1, yi, false);
  const kernels::RowsShape rs{sx[0] * sx[1], sx[2] * sx[3], 0.0f};
  KernelCall call{"reduce",
                  {n.op == "GlobalAveragePool" ? "ReduceKind::Mean" : "ReduceKind::Max"},
                  {y.init, x.init, rows_shape_text(rs)}};
  call.launch = kernels::reduce_launch(rs);
  return {call};
}

std::vector<KernelCall> global_pool(KernelContext& c, const Node& n) {
  if (c.g.dialect().library() == KernelLibrary::cuda) return cuda_global_pool(c, n);
  const Shape& sx = n.inputs[0]->type.shape;
  return {{n.op == "GlobalAveragePool" ? "global_avg_pool2d" : "global_max_pool2d",
           {},
           {c.output().init, c.g.value(n.inputs[0]).init, std::to_string(sx[0]),
            std::to_string(sx[1]), std::to_string(sx[2]), std::to_string(sx[3])}}};
}

bool is_global(const Node& n) {
  return n.op == "GlobalAveragePool" || n.op == "GlobalMaxPool";
}

} // namespace

bool window_supported(const Kernel& k) {
  const Node& a = *k.anchor;
  const int rank = a.inputs[0]->type.rank();
  if (rank == 3 && (a.op == "Conv" || a.op == "MaxPool" || a.op == "AveragePool"))
    return !max_pool_tail(k) && (a.op == "Conv" || pool_window(a).has_value());
  if (rank != 4) return false;
  if (a.op == "Conv") {
    const Node* pool = max_pool_tail(k);
    return !pool || pool_window(*pool).has_value();
  }
  if (a.op == "MaxPool" || a.op == "AveragePool") return pool_window(a).has_value();
  return is_global(a);
}

std::vector<KernelCall> window_calls(KernelContext& c) {
  const Node& a = *c.kernel.anchor;
  if (a.op == "Conv") return conv(c, a);
  if (is_global(a)) return global_pool(c, a);
  return pool(c, a);
}

} // namespace vtc
