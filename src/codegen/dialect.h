// A Dialect: what the generated translation unit looks like on one target — its preamble,
// the qualifier of generated member functions, whether accessors get run forms (the cpu
// kernels' vectorised runs), which kernel library the calls name, how a step becomes entry
// points (one host function per step on cpu; one __global__ kernel per call, each with its
// launch, on cuda) and the copy of a constant into an output. Accessor emission and kernel
// calls are written once against it; cpu_dialect.h and cuda_dialect.h implement it.
#pragma once

#include <cstdint>
#include <string>

namespace vtc {

struct KernelCall;

struct TranslationUnitFeatures {
  bool openblas = false; // a kernel calls OpenBLAS (blas.h)
};

// The kernel templates a dialect's calls instantiate: kernels/cpu or kernels/cuda. Their
// signatures differ, so the kernel-call emitters spell each call for one of them.
enum class KernelLibrary { cpu, cuda };

class Dialect {
public:
  virtual ~Dialect() = default;
  virtual KernelLibrary library() const = 0;
  // The text every translation unit starts with (includes, helper functions).
  virtual std::string preamble(const TranslationUnitFeatures& features) const = 0;
  // The qualifier put before generated member functions ("" on cpu, "VTC_HD" where accessors
  // run in device code).
  virtual std::string function_qualifier() const = 0;
  // Whether accessors get run_load / run_store (runs along the last dimension).
  virtual bool run_forms() const = 0;
  // Whether epilogues get values<N> (N adjacent results at once, for a vector store; device
  // code).
  virtual bool vector_forms() const { return false; }
  // The memory transaction, in bytes, an accessor's contiguity is judged by.
  virtual int64_t transaction_bytes() const = 0;
  // Whether every call of a step is an entry point of its own, launched with the call's
  // KernelCall::launch (a GPU kernel); else a step is one entry point running its calls.
  virtual bool entry_per_call() const = 0;
  // A step's entry point named `name` running `body` (entry_per_call() false), or the entry
  // point of one call (entry_per_call() true; `body` is the call rendered).
  virtual std::string entry(const std::string& name, const std::string& body,
                            const KernelCall* call) const = 0;
  // The statement an entry point running after an index check starts with: return at once
  // when the run's status record (at address `status`) says a check failed; "" where the host
  // stops the run after a failed check itself (cpu).
  virtual std::string skip_after_failure(const std::string& status) const = 0;
  // The call copying `bytes` bytes from the buffer at address `from` to the one at `to`.
  virtual KernelCall copy_buffer(const std::string& to, const std::string& from,
                                 int64_t bytes) const = 0;
};

} // namespace vtc
