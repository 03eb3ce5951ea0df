// Plane flattening by composition: the flattened view is a reshape of the value, composed with
// the value's own mapping, and kept only when its contiguity shows whole planes in one run.
#include "mapping/flat_plane.h"

#include "mapping/compose.h"
#include "mapping/contiguity.h"
#include "mapping/layout.h"

namespace vtc {

PlaneUse plane_use(const Shape& shape, int64_t h, int64_t w) {
  const size_t r = shape.size();
  if (r == 0) return PlaneUse::constant;
  if (r == 1) return shape[0] == 1 ? PlaneUse::constant : PlaneUse::partial;
  const int64_t sh = shape[r - 2], sw = shape[r - 1];
  if (sh == h && sw == w) return PlaneUse::spans;
  if (sh == 1 && sw == 1) return PlaneUse::constant;
  return PlaneUse::partial;
}

Shape flat_plane_shape(const Shape& shape) {
  Shape s = shape;
  const size_t r = s.size();
  s[r - 1] *= s[r - 2];
  s[r - 2] = 1;
  return s;
}

std::optional<Mapping> flatten_plane(const Mapping& m, const Base* base, int64_t elem_bytes) {
  const Shape& shape = m.shape;
  if (shape.size() < 2) return std::nullopt;
  Result<Mapping> flat = compose(reshape_mapping(flat_plane_shape(shape), base), base, m);
  if (!flat.ok()) return std::nullopt;
  const int64_t plane = shape[shape.size() - 1] * shape[shape.size() - 2];
  if (contiguity(*flat, elem_bytes).run % plane != 0) return std::nullopt;
  return *flat.value;
}

} // namespace vtc
