// The per-kernel choice between templates and OpenBLAS, and its report.
#include "target/cpu_kernel_choice.h"

#include <fmt/core.h>

#include "codegen/kernel_call.h"
#include "codegen/library_conv.h"
#include "codegen/library_gemm.h"
#include "target/cpu_gemm_rule.h"
#include "vtc/error.h"

namespace vtc {

bool openblas_available() {
  return VTC_OPENBLAS;
}

void choose_kernel_impls(KernelGraph& kg, const LibraryChoice& choice) {
  VTC_CHECK(!choice.uses(LibraryMode::always) || openblas_available())
      << "library mode 'always': vtc was built without OpenBLAS (libopenblas-dev)";
  for (Kernel& k : kg.kernels) {
    k.impl = KernelImpl::vtc_template;
    const LibraryMode mode = openblas_available() ? choice.of(k) : LibraryMode::never;
    if (mode == LibraryMode::never) continue;
    std::optional<LibraryGemm> g = library_gemm_form(k);
    // The epilogue runs as generated code: a kernel with an op the code generator has no
    // expression for stays on the reference interpreter.
    if (!g || !generates_kernel(k)) continue;
    if (mode == LibraryMode::always || prefer_library_gemm(g->shape()))
      k.impl = KernelImpl::openblas_sgemm;
  }
}

std::vector<const Value*> library_operands(const Kernel& k) {
  if (k.impl == KernelImpl::vtc_template) return {};
  std::optional<LibraryGemm> g = library_gemm_form(k);
  if (!g) return {};
  return {g->a, g->b, g->out};
}

std::string kernel_impl_text(const KernelGraph& kg) {
  std::string s;
  for (const Kernel& k : kg.kernels) {
    std::string nodes;
    for (size_t i = 0; i < k.nodes.size(); ++i)
      nodes += (i ? ", " : "") + k.nodes[i]->op + " '" + k.nodes[i]->name + "'";
    std::string what =
        generates_kernel(k) ? kernel_impl_name(k.impl) : std::string("reference interpreter");
    if (std::optional<LibraryGemm> g = library_gemm_form(k))
      what = fmt::format("{:<15} {}M={} N={} K={}", what,
                         g->batch > 1 ? fmt::format("batch={} ", g->batch) : std::string(), g->M,
                         g->N, g->K);
    else if (std::optional<LibraryConvShape> c = library_conv_form(k))
      what = fmt::format("{:<15} {}x{} {}->{} {}x{}x{}", what, c->shape.kh, c->shape.kw,
                         c->shape.c_in, c->shape.c_out, c->shape.n, c->shape.h_out, c->shape.w_out);
    s += fmt::format("  {:<5} {:<11} {:<44} [{}]\n", k.name, kernel_kind_name(k.kind), what, nodes);
  }
  return s;
}

} // namespace vtc
