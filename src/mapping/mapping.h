// Mapping: how a virtual tensor of a given shape reads (or writes) physical storage. It is an
// ordered list of pieces; at a virtual index the first piece that applies decides. A piece
// applies where its guard box (one half-open range per virtual dimension) contains the index and
// its searches succeed; it then names a base tensor and one index expression per base dimension,
// over the virtual variables i0..i{r-1} (whose ranges are the guard's) — or, for a constant
// piece (Pad's border), a value and no base.
//
// A search is the one data-dependent guard: "some s in [0, n) satisfies all the equalities",
// binding variable i{r+k} for search k (last match wins, as a sequential scatter does). It is how
// ScatterND/ScatterElements read sides overlay the updates on the data when the indices are
// known only at run time.
//
// Example: Split of x[4,6] along axis 1 into [4,2] and [4,4]; output 1 reads x through one
// piece, guard [0:4, 0:4], index (i0, i1 + 2). The Concat of those two outputs back into [4,6]
// reads through two pieces: guard [0:4, 0:2] -> a[i0, i1] and guard [0:4, 2:6] -> b[i0, i1 - 2].
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mapping/base.h"
#include "mapping/index_expr.h"

namespace vtc {

struct Range {
  int64_t lo = 0, hi = 0; // half-open
  int64_t size() const { return hi > lo ? hi - lo : 0; }
  bool operator==(const Range&) const = default;
};
using Box = std::vector<Range>;

struct Search {
  int64_t extent = 0;                               // the variable ranges over [0, extent)
  std::vector<std::pair<IndexExpr, IndexExpr>> eqs; // all must hold
};

struct Piece {
  Box guard;
  std::vector<Search> searches; // search k binds variable guard.size() + k
  const Base* base = nullptr;   // null: a constant piece
  std::vector<IndexExpr> index; // one per base dimension
  double value = 0;             // constant pieces only

  bool is_constant() const { return base == nullptr; }
  int rank() const { return int(guard.size()); }
};

struct Mapping {
  Shape shape;
  std::vector<Piece> pieces;

  int rank() const { return int(shape.size()); }
};

// A value or the reason there is none (an impossible direction, an unrepresentable
// composition).
template <typename T> struct Result {
  std::optional<T> value;
  std::string reason;

  static Result fail(std::string why) { return Result{std::nullopt, std::move(why)}; }
  bool ok() const { return value.has_value(); }
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};

Box full_box(const Shape& shape);
int64_t box_volume(const Box& b);
// Variable d over the guard's range on dimension d (a constant when that range has one value).
IndexExpr box_var(const Box& b, int d);
std::vector<IndexExpr> box_vars(const Box& b);

// One piece over the whole of `shape`: index[d] = f(vars)[d].
Mapping single_piece(const Shape& shape, const Base* base, std::vector<IndexExpr> index);
// v[i] = base[i].
Mapping identity_mapping(const Base* base);

// Re-expresses `p` over the smaller guard `sub` (each range inside p's): the variables take the
// narrower ranges and the expressions are simplified again.
Piece restrict_piece(const Piece& p, const Box& sub);

// Drops equalities of searches that hold trivially (both sides the same expression); false when
// one can never hold (two different constants), so the piece never applies.
bool prune_searches(Piece& p);

// The row-major element offset of a piece's index into its base: Σ index[d]·stride[d].
IndexExpr flat_offset(const Piece& p);

// Interval of `e` over a guard box (variables beyond the box keep their own ranges).
Interval bounds(IndexExpr e, const Box& box);

// Where a virtual index lands: the piece, its base (null for a constant piece) and the base
// index, or nullopt when no piece applies.
struct Located {
  int piece = -1;
  const Base* base = nullptr;
  std::vector<int64_t> index;
  double value = 0;
};
std::optional<Located> locate(const Mapping& m, std::span<const int64_t> index,
                              const LoadFn& load = {});

// Stable text forms, one line per piece:
//   piece 0: [0:4, 2:6] -> b[i0, i1 - 2]
//   piece 1: [0:8] search s0 in [0:3) where load(idx, s0, 0) == i0 -> upd[s0, i1]
std::string to_string(const Piece& p);
std::string to_string(const Mapping& m);

} // namespace vtc
