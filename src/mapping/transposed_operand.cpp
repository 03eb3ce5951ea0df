// The transposed view of a matrix operand by composition: a transpose of the value's last two
// dimensions composed with the value's own mapping, kept only when its contiguity shows each
// of its rows in one run while the value's own rows are not.
#include "mapping/transposed_operand.h"

#include <numeric>
#include <utility>
#include <vector>

#include "mapping/compose.h"
#include "mapping/contiguity.h"
#include "mapping/layout.h"

namespace vtc {

std::optional<Mapping> transposed_operand(const Mapping& m, const Base* base, int64_t elem_bytes) {
  const Shape& shape = m.shape;
  const size_t r = shape.size();
  if (r < 2 || shape[r - 2] < 2 || contiguity(m, elem_bytes).run > 1) return std::nullopt;
  std::vector<int64_t> perm(r);
  std::iota(perm.begin(), perm.end(), int64_t(0));
  std::swap(perm[r - 1], perm[r - 2]);
  Result<Mapping> t = compose(transpose_read(base, perm), base, m);
  if (!t.ok() || contiguity(*t, elem_bytes).run % shape[r - 2] != 0) return std::nullopt;
  return *t.value;
}

} // namespace vtc
