// A Dialect: what the generated translation unit looks like on one target — its preamble,
// the qualifier of generated member functions, whether accessors get run forms (the cpu
// kernels' vectorised runs), the signature of a step's entry point and the copy of a constant
// into an output. Accessor emission and kernel calls are written once against it; the cpu
// dialect is cpu_dialect.h, the cuda one implements the same interface.
#pragma once

#include <cstdint>
#include <string>

namespace vtc {

struct TranslationUnitFeatures {
  bool openblas = false; // a kernel calls OpenBLAS (blas.h)
};

class Dialect {
public:
  virtual ~Dialect() = default;
  // The text every translation unit starts with (includes, helper functions).
  virtual std::string preamble(const TranslationUnitFeatures& features) const = 0;
  // The qualifier put before generated member functions ("" on cpu, "VTC_HD" where accessors
  // run in device code).
  virtual std::string function_qualifier() const = 0;
  // Whether accessors get run_load / run_store (runs along the last dimension).
  virtual bool run_forms() const = 0;
  // The memory transaction, in bytes, an accessor's contiguity is judged by.
  virtual int64_t transaction_bytes() const = 0;
  // A step's entry point named `name` whose body is `body`.
  virtual std::string entry(const std::string& name, const std::string& body) const = 0;
  // A body copying `bytes` bytes from buffer `from` to buffer `to`.
  virtual std::string copy_buffer(int to, int from, int64_t bytes) const = 0;
};

} // namespace vtc
