// Bases: the physical (or, before composition, intermediate) tensors that mapping pieces index.
// A base is identified by a key the caller chooses (a graph Value*, or any pointer), a name for
// printing and emitting, its shape, and, when known, the closed range of the integer values it
// holds (constant index tensors), which lets the simplifier drop `mod n` on non-negative
// indices. Bases are interned: equal (key, name, shape, range) give the same pointer, so pieces
// compare bases by pointer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mapping/interval.h"
#include "vtc/tensor.h"

namespace vtc {

struct Base {
  const void* key = nullptr;
  std::string name;
  Shape shape;
  std::optional<Interval> values; // closed range of the element values, when known

  int rank() const { return int(shape.size()); }
};

// The interned base for (key, name, shape, values); never null, lives for the program.
const Base* intern_base(const void* key, const std::string& name, const Shape& shape,
                        std::optional<Interval> values = std::nullopt);

// A base keyed by its name alone (tests, benchmarks, hand-built mappings).
inline const Base* named_base(const std::string& name, const Shape& shape,
                              std::optional<Interval> values = std::nullopt) {
  return intern_base(nullptr, name, shape, values);
}

} // namespace vtc
