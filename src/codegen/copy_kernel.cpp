// The generic copy kernel (see copy_kernel.h): `copy` over the output's index space (cpu:
// copy(out, shape, in); cuda: copy(out, in, MapShape) with its launch), over image planes
// flattened to one row when both sides keep them contiguous. An input that runs along another
// dimension than the output's last (a transpose) is copied by copy_transposed: on cuda through
// shared-memory tiles, on the cpu through local tiles, over the index space of both sides
// coalesced (mapping/coalesce.h), which also gives the generic cpu copy its longest rows.
#include "codegen/copy_kernel.h"

#include <cstdlib>
#include <string>

#include "codegen/kernel_call.h"
#include "kernels/cuda/elementwise.h"
#include "mapping/coalesce.h"
#include "mapping/contiguity.h"
#include "mapping/flat_plane.h"
#include "mapping/rules.h"
#include "mapping/transposed_operand.h"
#include "vtc/error.h"

namespace vtc {

namespace {

bool is_scatter(const Node& n) {
  return n.op == "ScatterND" || n.op == "ScatterElements" || n.op == "Scatter";
}

// A run this long along the output's last dimension moves whole transactions already; the
// transposed copy needs one at least this long along another dimension.
constexpr int64_t kTransposeRun = 8;

// $VTC_CUDA_TRANSPOSE_COPY=0 copies transposes with the generic kernel (to compare).
bool tiled_transposes() {
  const char* v = std::getenv("VTC_CUDA_TRANSPOSE_COPY");
  return !v || std::string(v) != "0";
}

// The MapShape literal of `shape`, as the cuda copy kernels take it.
std::string map_shape_literal(const Shape& shape) {
  std::string extents;
  for (size_t d = 0; d < shape.size(); ++d)
    extents += (d ? ", " : "") + std::to_string(shape[d]);
  return "MapShape<" + std::to_string(shape.size()) + ">{{" + extents + "}}";
}

KernelCall copy_transposed_call(const Acc& out, const Shape& shape, const Acc& in, int j) {
  KernelCall call{
      "copy_transposed", {std::to_string(j)}, {out.init, in.init, map_shape_literal(shape)}};
  call.launch = kernels::copy_transposed_launch(shape_numel(shape), shape[size_t(j)], shape.back());
  return call;
}

// Whether every base of `m` is read through a pointer (a value with a buffer of its own), not
// through a nested accessor of a virtual value.
bool physical_bases(const Mapping& m, const StorageMap& storage) {
  for (const Piece& p : m.pieces)
    if (p.base && storage.virtual_values.count(static_cast<const Value*>(p.base->key)))
      return false;
  return true;
}

// The cpu copy of `out` from `in` over the index space of both sides coalesced (the copy
// [1, 16, 16, 3, 10] <- a transpose of [1, 3, 10, 16, 16] runs as [256, 30]): copy_transposed
// where the input runs along a dimension before the last, else the generic copy; nullopt when
// neither coalescing nor a transpose changes the generic copy over the output's own shape.
std::optional<KernelCall> cpu_copy_call(AccessorEmitter& g, const Value* out, const Mapping& in) {
  const Mapping stored = g.storage_mapping(out);
  if (!physical_bases(stored, g.storage()) || !physical_bases(in, g.storage())) return std::nullopt;
  const CoalescedSpace space = coalesce({stored, in});
  const Shape& shape = space.shape;
  const DType t = out->type.dtype;
  if (std::optional<int> j =
          transposed_dimension(space.mappings[1], shape, int64_t(dtype_size(t)))) {
    const Acc o = g.mapped(space.mappings[0], t);
    const Acc in_t = g.mapped(swap_dims(space.mappings[1], *j, int(shape.size()) - 1), t);
    return KernelCall{
        "copy_transposed", {std::to_string(*j)}, {o.init, shape_array(shape), in_t.init}};
  }
  if (shape == out->type.shape) return std::nullopt;
  const Acc o = g.mapped(space.mappings[0], t);
  return copy_call(g.dialect(), o, shape, g.mapped(space.mappings[1], t));
}

} // namespace

std::optional<int> transposed_dimension(const Mapping& in, const Shape& shape, int64_t elem_bytes) {
  const int r = int(shape.size());
  if (r < 2 || in.pieces.size() != 1 || shape[size_t(r - 1)] < kTransposeRun ||
      contiguity(in, elem_bytes).run >= kTransposeRun)
    return std::nullopt;
  std::optional<int> best;
  int64_t best_run = kTransposeRun - 1;
  for (int j = 0; j < r - 1; ++j) {
    if (shape[size_t(j)] < kTransposeRun) continue;
    const int64_t run = contiguity(swap_dims(in, j, r - 1), elem_bytes).run;
    if (run > best_run) best = j, best_run = run;
  }
  return best;
}

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
  KernelCall call{"copy", {}, {out.init, in.init, map_shape_literal(shape)}};
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
    if (dialect.library() == KernelLibrary::cpu) {
      if (std::optional<KernelCall> c = cpu_copy_call(g, out, *r.mappings[k])) {
        calls.push_back(std::move(*c));
        continue;
      }
    }
    if (dialect.library() != KernelLibrary::cpu && tiled_transposes()) {
      std::optional<int> j =
          transposed_dimension(*r.mappings[k], shape, int64_t(dtype_size(out->type.dtype)));
      if (j) {
        calls.push_back(copy_transposed_call(g.stored(out), shape,
                                             g.mapped(*r.mappings[k], out->type.dtype), *j));
        continue;
      }
    }
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
