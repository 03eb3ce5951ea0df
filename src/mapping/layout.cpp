// Reshape and transpose index arithmetic shared by the rules.
#include "mapping/layout.h"

#include "vtc/error.h"

namespace vtc {

IndexExpr flatten_index(const std::vector<IndexExpr>& vars, const Shape& shape) {
  Shape strides = shape_strides(shape);
  IndexExpr flat = IndexExpr::constant(0);
  for (size_t d = 0; d < vars.size(); ++d)
    flat = flat + vars[d] * strides[d];
  return flat;
}

std::vector<IndexExpr> unflatten_index(IndexExpr flat, const Shape& shape) {
  Shape strides = shape_strides(shape);
  std::vector<IndexExpr> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    IndexExpr e = floordiv(flat, strides[d]);
    out.push_back(d == 0 ? e : mod(e, shape[d]));
  }
  return out;
}

std::vector<IndexExpr> reshape_index(const std::vector<IndexExpr>& vars, const Shape& from,
                                     const Shape& to) {
  VTC_CHECK(shape_numel(from) == shape_numel(to))
      << "reshape of " << shape_str(from) << " to " << shape_str(to) << " changes the size";
  return unflatten_index(flatten_index(vars, from), to);
}

Mapping reshape_mapping(const Shape& shape, const Base* base) {
  return single_piece(shape, base, reshape_index(box_vars(full_box(shape)), shape, base->shape));
}

Mapping transpose_read(const Base* x, const std::vector<int64_t>& perm) {
  Shape y;
  for (int64_t p : perm)
    y.push_back(x->shape[size_t(p)]);
  std::vector<IndexExpr> i = box_vars(full_box(y)), j(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    j[size_t(perm[d])] = i[d];
  return single_piece(y, x, j);
}

Mapping transpose_write(const Base* x, const Base* y, const std::vector<int64_t>& perm) {
  std::vector<IndexExpr> j = box_vars(full_box(x->shape)), i(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    i[d] = j[size_t(perm[d])];
  return single_piece(x->shape, y, i);
}

} // namespace vtc
