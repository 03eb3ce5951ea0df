// The transposed view of a matrix operand by composition: a transpose of the value's last two
// dimensions composed with the value's own mapping, kept only when its contiguity shows each
// of its rows in one run while the value's own rows are not; and the same exchange of the last
// two dimensions by direct substitution, which needs no base for the value.
#include "mapping/transposed_operand.h"

#include <numeric>
#include <utility>
#include <vector>

#include "mapping/compose.h"
#include "mapping/contiguity.h"
#include "mapping/layout.h"
#include "vtc/error.h"

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

Mapping swap_dims(const Mapping& m, int a, int b) {
  const int r = m.rank();
  VTC_CHECK(a >= 0 && b >= 0 && a < r && b < r)
      << "swap_dims " << a << ", " << b << " of a rank-" << r << " mapping";
  Mapping out{m.shape, {}};
  std::swap(out.shape[size_t(a)], out.shape[size_t(b)]);
  for (const Piece& p : m.pieces) {
    Piece q = p;
    std::swap(q.guard[size_t(a)], q.guard[size_t(b)]);
    std::vector<IndexExpr> repl(static_cast<size_t>(r));
    // old variable a (range guard[a]) is now variable b, and the other way round; the rest
    // stay (a null replacement keeps the variable).
    repl[size_t(a)] = IndexExpr::var(b, p.guard[size_t(a)].lo, p.guard[size_t(a)].hi);
    repl[size_t(b)] = IndexExpr::var(a, p.guard[size_t(b)].lo, p.guard[size_t(b)].hi);
    for (IndexExpr& e : q.index)
      e = substitute(e, repl);
    for (Search& s : q.searches)
      for (auto& [x, y] : s.eqs) {
        x = substitute(x, repl);
        y = substitute(y, repl);
      }
    out.pieces.push_back(std::move(q));
  }
  return out;
}

Mapping swap_last_two(const Mapping& m) {
  const int r = m.rank();
  VTC_CHECK(r >= 2) << "swap_last_two of a rank-" << r << " mapping";
  return swap_dims(m, r - 2, r - 1);
}

} // namespace vtc
