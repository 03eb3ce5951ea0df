// Kernel calls: rendering, the context every kind's emitter shares, dispatch on the kernel
// kind fusion computed, and the kinds small enough to live here (elementwise kernels and
// nearest-neighbour Resize by whole factors; any other Resize: resample_calls.cpp).
#include "codegen/kernel_call.h"

#include <algorithm>
#include <set>

#include "codegen/copy_kernel.h"
#include "codegen/elementwise_expr.h"
#include "codegen/kernel_calls.h"
#include "kernels/cuda/resize.h"
#include "mapping/flat_plane.h"
#include "mapping/rules.h"
#include "passes/fusion.h"
#include "vtc/error.h"

namespace vtc {

std::string KernelCall::render() const {
  std::string call = function;
  if (!template_args.empty()) {
    call += "<";
    for (size_t i = 0; i < template_args.size(); ++i)
      call += (i ? ", " : "") + template_args[i];
    call += ">";
  }
  call += "(";
  for (size_t i = 0; i < args.size(); ++i)
    call += (i ? ", " : "") + args[i];
  call += ");\n";
  if (!guard.empty()) call = "if (" + guard + ")\n    " + call;
  if (locals.empty() && !block) return "  " + call;
  std::string block = "  {\n";
  for (const std::string& l : locals)
    block += "    " + l + "\n";
  return block + "    " + call + "  }\n";
}

KernelContext::KernelContext(const Kernel& k, AccessorEmitter& gen) : kernel(k), g(gen) {
  for (const Node* n : k.nodes)
    for (const Value* v : n->outputs)
      if (v) g.inside.insert(v);
}

Acc KernelContext::output(const PostOp& post, const Acc* into) {
  const Value* first = kernel.anchor->outputs[0];
  std::vector<const Node*> chain = epilogue_chain(kernel);
  if (chain.empty() && post.identity()) return into ? *into : g.stored(first);
  return g.storing(first, post, chain, into);
}

bool KernelContext::plane_flattens(int64_t h, int64_t w, size_t anchor_own) const {
  if (h <= 1) return false;
  std::set<const Value*> outputs(kernel.outputs.begin(), kernel.outputs.end());
  auto fits = [&](const Value* v) {
    switch (plane_use(v->type.shape, h, w)) {
    case PlaneUse::constant:
      return true;
    case PlaneUse::partial:
      return false;
    case PlaneUse::spans:
      return (g.inside.count(v) && !outputs.count(v)) || g.flat_mapping(v).has_value();
    }
    return false;
  };
  for (const Node* n : kernel.nodes) {
    for (size_t k = 0; k < n->inputs.size(); ++k) {
      const Value* in = n->inputs[k];
      if (!in || (n == kernel.anchor && k >= anchor_own) ||
          (n->op == "BatchNormalization" && k > 0))
        continue;
      if (!fits(in)) return false;
    }
    for (const Value* o : n->outputs)
      if (o && !fits(o)) return false;
  }
  return true;
}

PostOp gemm_post(const Node& n, AccessorEmitter& g) {
  const double alpha = n.attr_float("alpha", 1.0f), beta = n.attr_float("beta", 1.0f);
  const bool bias = n.input(2) && beta != 0;
  if (alpha == 1.0 && !bias) return {};
  PostOp post;
  if (bias)
    post.operands.push_back({g.value(n.inputs[2]), broadcast_index(n.inputs[2]->type.shape, 2)});
  post.expr = [alpha, beta, bias](const std::vector<std::string>& c) {
    std::string p = alpha == 1.0 ? "v" : "(v * " + std::to_string(alpha) + ")";
    if (bias)
      p = "(" + p + " + " + (beta == 1.0 ? c[0] : std::to_string(beta) + " * " + c[0]) + ")";
    return p;
  };
  return post;
}

namespace {

// An elementwise kernel: each output computed from its prologue, over the planes flattened to
// one row when every operand allows it.
std::vector<KernelCall> elementwise_calls(KernelContext& c) {
  std::vector<KernelCall> calls;
  for (const Value* o : c.kernel.outputs) {
    const Shape& shape = o->type.shape;
    const size_t r = shape.size();
    std::optional<KernelContext::FlatPlaneScope> flat;
    if (r >= 2 && c.plane_flattens(shape[r - 2], shape[r - 1], 0))
      flat.emplace(c.g, shape[r - 2], shape[r - 1]);
    Acc in = c.g.computed(o);
    Acc out = c.g.stored(o);
    calls.push_back(copy_call(c.g.dialect(), out, flat ? flat_plane_shape(shape) : shape, in));
  }
  return calls;
}

// Nearest-neighbour upsampling by whole factors with asymmetric coordinates and floor
// rounding (PyTorch's `nearest`): out[i] = in[i / k] per dimension. Its factors, or nullopt.
std::optional<Shape> nearest_factors(const Node& n) {
  if (n.op != "Resize" || n.attr_string("mode", "nearest") != "nearest" ||
      n.attr_string("coordinate_transformation_mode", "half_pixel") != "asymmetric" ||
      n.attr_string("nearest_mode", "round_prefer_floor") != "floor" || n.has_attr("axes"))
    return std::nullopt;
  const Shape& si = n.inputs[0]->type.shape;
  const Shape& so = n.outputs[0]->type.shape;
  const Value* scales = n.input(2);
  if (scales && scales->type.numel() > 0 && !scales->constant) return std::nullopt;
  Shape factor;
  for (size_t d = 0; d < si.size(); ++d) {
    if (si[d] == 0 || so[d] % si[d] != 0) return std::nullopt;
    int64_t k = so[d] / si[d];
    if (scales && scales->type.numel() > 0 && scales->constant->get_f64(int64_t(d)) != double(k))
      return std::nullopt;
    factor.push_back(k);
  }
  if (so.empty()) return std::nullopt;
  return factor;
}

std::vector<KernelCall> resize_calls(KernelContext& c) {
  const Node& n = *c.kernel.anchor;
  std::optional<Shape> factor = nearest_factors(n);
  VTC_CHECK(factor) << n.describe() << ": not a nearest upsampling by whole factors";
  const Shape& so = n.outputs[0]->type.shape;
  if (c.g.dialect().library() == KernelLibrary::cuda) {
    std::string ext, fac;
    for (size_t d = 0; d < so.size(); ++d) {
      ext += (d ? ", " : "") + std::to_string(so[d]);
      fac += (d ? ", " : "") + std::to_string((*factor)[d]);
    }
    const std::string r = std::to_string(so.size());
    KernelCall call{"upsample_nearest",
                    {},
                    {c.output().init, c.g.value(n.inputs[0]).init,
                     "UpsampleShape<" + r + ">{{" + ext + "}, {" + fac + "}}"}};
    kernels::UpsampleShape<1> flat{{shape_numel(so)}, {1}};
    call.launch = kernels::upsample_nearest_launch(flat);
    return {call};
  }
  return {{"upsample_nearest",
           {},
           {c.output().init, c.g.value(n.inputs[0]).init, shape_array(n.outputs[0]->type.shape),
            shape_array(*factor)}}};
}

bool is_reduce(const Node& n) {
  return n.op.rfind("Reduce", 0) == 0;
}

} // namespace

bool resamples_by_taps(const Kernel& k) {
  return k.kind == KernelKind::other && k.anchor && k.anchor->op == "Resize" &&
         !nearest_factors(*k.anchor).has_value();
}

bool generates_kernel(const Kernel& k) {
  const Node* pool = max_pool_tail(k);
  // An attention kernel's chain (MatMul, Softmax, ...) is its own; its other nodes are
  // prologues and epilogues.
  std::optional<AttentionPattern> attention;
  if (k.kind == KernelKind::attention) {
    if (!attention_supported(k)) return false;
    attention = match_attention(*k.anchor);
  }
  auto in_chain = [&](const Node* n) {
    return attention &&
           std::find(attention->chain.begin(), attention->chain.end(), n) != attention->chain.end();
  };
  for (const Node* n : k.nodes)
    if (n != k.anchor && n != pool && !in_chain(n) &&
        (!is_fusible_elementwise(*n) || !has_elementwise_expr(*n)))
      return false;
  if (!k.anchor) return true;
  const Node& a = *k.anchor;
  for (size_t i = 1; i < a.outputs.size(); ++i)
    if (a.outputs[i] && (!a.outputs[i]->users.empty() || a.outputs[i]->is_graph_output))
      return false; // extra outputs (indices, statistics): reference only
  switch (k.kind) {
  case KernelKind::gemm:
    return gemm_supported(k);
  case KernelKind::conv:
  case KernelKind::pool:
    return window_supported(k);
  case KernelKind::norm:
  case KernelKind::softmax:
  case KernelKind::reduce:
    return row_supported(k);
  case KernelKind::attention:
    return true; // attention_supported, above
  case KernelKind::elementwise:
    return true;
  case KernelKind::other:
    return is_reduce(a) ? row_supported(k)
                        : nearest_factors(a).has_value() || resample_supported(a);
  }
  return false;
}

std::vector<KernelCall> kernel_calls(const Kernel& k, AccessorEmitter& g) {
  VTC_CHECK(generates_kernel(k)) << k.name << ": no kernel template takes it";
  KernelContext c(k, g);
  std::vector<KernelCall> calls;
  if (!k.anchor) {
    calls = elementwise_calls(c);
  } else {
    switch (k.kind) {
    case KernelKind::gemm:
      calls = gemm_calls(c);
      break;
    case KernelKind::conv:
    case KernelKind::pool:
      calls = window_calls(c);
      break;
    case KernelKind::norm:
    case KernelKind::softmax:
    case KernelKind::reduce:
      calls = row_calls(c);
      break;
    case KernelKind::attention:
      calls = attention_calls(c);
      break;
    case KernelKind::elementwise:
      calls = elementwise_calls(c);
      break;
    case KernelKind::other:
      calls = is_reduce(*k.anchor)                     ? row_calls(c)
              : nearest_factors(*k.anchor).has_value() ? resize_calls(c)
                                                       : resample_calls(c);
      break;
    }
  }
  return calls;
}

} // namespace vtc
