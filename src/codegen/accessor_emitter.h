// Accessor emission: the structs a kernel template reads and writes through, generated from
// the storage of each value (codegen of every target). Accessors come in four shapes, all
// plain aggregates so the compiler sees every index computation whole:
//   mapped   — a Mapping: one piece per guard, physical bases as raw pointers with constant
//              strides (emit_offset), virtual bases as nested accessors;
//   computed — a fused prologue value: f(operands at the broadcast index), rounded to its dtype;
//   storing  — an epilogue chain ending in a store to the kernel's real output;
//   view     — an index remapping (batch flattening, an axis moved last, a transpose).
// The dialect supplies what differs per target (function qualifiers, whether run forms are
// emitted); the accessor contract is kernels/common/accessor.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "codegen/dialect.h"
#include "codegen/site_args.h"
#include "lower/program.h"
#include "mapping/mapping.h"

namespace vtc {

// An emitted accessor: its type and the expression building it (which reads `buf`).
struct Acc {
  std::string type;
  std::string init;
  int rank = 0;
};

// One coordinate of an index an operand is read at: an expression over the result index `i`,
// and the set of i's dimensions it involves (bit d for i[d]).
struct IndexTerm {
  std::string text;
  uint64_t dims = 0;

  static IndexTerm zero() { return {"0", 0}; }
  static IndexTerm dim(int d) { return {"i[" + std::to_string(d) + "]", uint64_t(1) << d}; }
  bool uses(int d) const { return (dims >> d) & 1; }
  bool is_dim(int d) const { return dims == (uint64_t(1) << d) && text == dim(d).text; }
};
using IndexTerms = std::vector<IndexTerm>;

// An operand of a computed value or an epilogue: its accessor and the index it is read at.
struct ReadOperand {
  Acc acc;
  IndexTerms index;
};

// What a kernel applies to its accumulated value `v` before the epilogue chain (Gemm's alpha
// and beta * C, a convolution's bias): an expression of v and the operands' values. Empty:
// v itself.
struct PostOp {
  std::vector<ReadOperand> operands;
  std::function<std::string(const std::vector<std::string>& operand_values)> expr;
  bool identity() const { return !expr; }
};

// Indices of an operand of shape `in` read at index `i` of a result of rank `out_rank`, with
// numpy broadcasting (size-1 dims read index 0).
IndexTerms broadcast_index(const Shape& in, int out_rank);
// The storage of a 4-D value v held channels-last: v[n, c, h, w] at [n, h, w, c] of a base
// keyed by v (its buffer) of shape [n, h, w, c].
Mapping channels_last_storage(const Value* v);
// Row-major unflattening of dimension `d` of the index over `dims`: one term per dim.
IndexTerms unflatten(int d, const Shape& dims);
// The index `operand` k of `node` is read at, for a result of rank `rank`: broadcast, except
// BatchNormalization's parameters, which are per channel (i[1]).
IndexTerms operand_index(const Node& node, size_t k, int rank);
// "Index<R>{...}" of terms.
std::string index_of(int rank, const IndexTerms& xs);
// "Index<R>{d0, d1, ...}" of a shape.
std::string shape_array(const Shape& s);
// A double as a C++ literal that reads back exactly.
std::string literal(double v);

class AccessorEmitter {
public:
  // Buffers are named through `site` (site_args.h); accessor types are numbered from
  // `counter` and defined in `defs`.
  AccessorEmitter(const StorageMap& storage, const Dialect& dialect, std::string& defs,
                  int& counter, SiteArgs& site)
      : storage_(storage), dialect_(dialect), defs_(defs), counter_(counter), site_(site) {}

  // Values produced inside the kernel being generated (computed, not loaded).
  std::set<const Value*> inside;

  // While set to [h, w], the kernel being generated runs over its image planes flattened to
  // one row (mapping/plane): values spanning the plane are read and written as [.., 1, h*w].
  std::optional<std::pair<int64_t, int64_t>> flat_plane;
  // While set, the kernel being generated runs over its 4-D results in channels-last index
  // order [n, h, w, c] (a convolution whose input or output lies channels-last): 4-D values
  // are read and written through their mappings seen in that order, operands of lower rank at
  // their broadcast index with its dimensions moved the same way.
  bool channels_last_index = false;

  // The mapping of a value as stored: the identity on its buffer, or its virtual mapping.
  Mapping storage_mapping(const Value* v) const;
  // The mapping of a 4-D value as stored, seen in channels-last index order [n, h, w, c].
  Mapping channels_last_view(const Value* v) const;
  // Its mapping seen over the flattened plane; nullopt when that is not worth it or possible.
  std::optional<Mapping> flat_mapping(const Value* v) const;

  // The accessor of a value as stored (over the flattened plane while one is set).
  Acc stored(const Value* v);
  Acc stored_as_is(const Value* v);
  // The accessor a kernel reads a value through: computed when produced inside the kernel.
  Acc value(const Value* v);
  // Whether v is read from a buffer of its own, as stored (neither virtual nor computed here)
  // and dense in its own order (not channels-last).
  bool physical(const Value* v) const {
    return storage_.buffer_of.count(v) && !storage_.virtual_values.count(v) &&
           !storage_.channels_last.count(v) && !inside.count(v);
  }
  // Whether v lies in its buffer channels-last (StorageMap::channels_last).
  bool channels_last(const Value* v) const { return storage_.channels_last.count(v) != 0; }

  Acc mapped(const Mapping& m, DType dtype);
  Acc computed(const Value* v);
  // `runs`, when positive, is the view's contiguous run along its last dimension where the
  // caller knows it (a dense tensor's dimension whose later dimensions are all of size 1);
  // otherwise the inner accessor's when `keeps_last`, else 1.
  Acc view(const Acc& inner, int rank, const IndexTerms& index, bool keeps_last, int64_t runs = 0);
  // Stores through the epilogue chain `chain` (each node consumes the previous value), after
  // `post` applied to the accumulated value and rounded to `first`'s dtype. `into`, when
  // given, is where the chain's last value goes instead of its own storage.
  Acc storing(const Value* first, const PostOp& post, const std::vector<const Node*>& chain,
              const Acc* into = nullptr);

  // The address of a physical value's buffer as `T*` (for library calls, which take dense
  // operands only).
  std::string buffer_address(const Value* v);
  // A physical value (physical()) as the kernels' DenseAccessor<T, R> over `shape`, its
  // elements in row-major order (any shape of the same size: a plane flattened, a unit
  // dimension inserted). One type for every such operand, so a kernel template instantiated
  // over it is compiled once per part, not once per kernel (the cpu target's convolutions).
  Acc dense(const Value* v, const Shape& shape);
  // The buffer of a physical value (a library kernel's operand); throws when it is virtual.
  int physical_buffer(const Value* v) const;
  // The ConstantRef argument for a kernel operand: the program's packs and the buffer, when
  // the value is a constant in a buffer of its own; a default ConstantRef otherwise.
  std::string constant_ref(const Value* v);
  // The kernel's site table, for buffers and integers named outside accessors.
  SiteArgs& site() { return site_; }

  // operand_index(node, k, rank), over the flattened plane while one is set.
  IndexTerms plane_operand_index(const Node& node, size_t k, int rank) const;

  const StorageMap& storage() const { return storage_; }
  const Dialect& dialect() const { return dialect_; }

private:
  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }
  void def(const std::string& s) { defs_ += s; }
  // "VTC_HD " where the dialect qualifies functions, else "".
  std::string q() const;

  const StorageMap& storage_;
  const Dialect& dialect_;
  std::string& defs_;
  int& counter_;
  SiteArgs& site_;
};

} // namespace vtc
