// The generic copy kernel (see copy_kernel.h): `copy` over the output's index space (cpu:
// copy(out, shape, in); cuda: copy(out, in, MapShape) with its launch), over image planes
// flattened to one row when both sides keep them contiguous.
#include "codegen/copy_kernel.h"

#include "codegen/kernel_call.h"
#include "kernels/cuda/elementwise.h"
#include "mapping/flat_plane.h"
#include "mapping/rules.h"
#include "vtc/error.h"

namespace vtc {

namespace {

bool is_scatter(const Node& n) {
  return n.op == "ScatterND" || n.op == "ScatterElements" || n.op == "Scatter";
}

} // namespace

bool generates_copy(const Node& n) {
  // An empty tensor has no index space a mapping could be written over: the interpreter
  // moves its nothing.
  for (const std::vector<Value*>* values : {&n.inputs, &n.outputs})
    for (const Value* v : *values)
      if (v && v->type.numel() == 0) return false;
  if (is_scatter(n)) {
    if (n.attr_string("reduction", "none") != "none") return false;
    RuleResult w = write_side(n);
    return w.ok() && w.mappings.size() > 2 && w.mappings[2];
  }
  return read_side(n).ok();
}

KernelCall copy_call(const Dialect& dialect, const Acc& out, const Shape& shape, const Acc& in) {
  if (dialect.library() == KernelLibrary::cpu)
    return {"copy", {}, {out.init, shape_array(shape), in.init}};
  std::string extents;
  for (size_t d = 0; d < shape.size(); ++d)
    extents += (d ? ", " : "") + std::to_string(shape[d]);
  const std::string r = std::to_string(shape.size());
  KernelCall call{"copy", {}, {out.init, in.init, "MapShape<" + r + ">{{" + extents + "}}"}};
  call.launch = kernels::copy_launch(kernels::MapShape<1>{{shape_numel(shape)}});
  return call;
}

std::vector<KernelCall> copy_calls(const Node& n, AccessorEmitter& g) {
  const StorageMap& storage = g.storage();
  const Dialect& dialect = g.dialect();
  std::vector<KernelCall> calls;
  if (is_scatter(n)) {
    VTC_CHECK(n.attr_string("reduction", "none") == "none")
        << n.describe() << ": reductions run on the reference interpreter";
    const Value* out = n.outputs[0];
    const Value* data = n.inputs[0];
    RuleResult w = write_side(n);
    VTC_CHECK(w.ok() && w.mappings.size() > 2 && w.mappings[2])
        << n.describe() << ": no write mapping for the updates: " << w.reason;
    Acc o = g.stored(out), d = g.stored(data);
    auto bo = storage.buffer_of.find(out), bd = storage.buffer_of.find(data);
    KernelCall copy = copy_call(dialect, o, out->type.shape, d);
    if (bo != storage.buffer_of.end() && bd != storage.buffer_of.end())
      copy.guard = g.site().buffer(bo->second) + " != " + g.site().buffer(bd->second);
    calls.push_back(std::move(copy));
    Acc target = g.mapped(*w.mappings[2], out->type.dtype);
    calls.push_back(copy_call(dialect, target, n.inputs[2]->type.shape, g.stored(n.inputs[2])));
    return calls;
  }
  RuleResult r = read_side(n);
  VTC_CHECK(r.ok()) << n.describe() << ": no read mapping: " << r.reason;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const Value* out = n.outputs[k];
    if (!out || !r.mappings[k]) continue;
    // Over the planes flattened to one row when both sides keep them contiguous.
    const Shape& shape = out->type.shape;
    const size_t rank = shape.size();
    std::optional<Mapping> flat_in;
    if (rank >= 2 && shape[rank - 2] > 1 && g.flat_mapping(out))
      flat_in =
          flatten_plane(*r.mappings[k], value_base(out), int64_t(dtype_size(out->type.dtype)));
    if (flat_in) g.flat_plane = std::pair{shape[rank - 2], shape[rank - 1]};
    Acc in = g.mapped(flat_in ? *flat_in : *r.mappings[k], out->type.dtype);
    calls.push_back(
        copy_call(dialect, g.stored(out), flat_in ? flat_plane_shape(shape) : shape, in));
    g.flat_plane.reset();
  }
  return calls;
}

} // namespace vtc
