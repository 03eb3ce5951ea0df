// Which implementation each kernel gets on the cpu target, decided from the kernel alone (its
// anchor op, dtypes and shapes) before any strategy runs: a library kernel needs its matrix
// operands and its output physical, and since the choice does not depend on the strategy,
// every strategy runs the same arithmetic and their outputs stay bitwise identical.
//   never   every kernel on its template;
//   auto    OpenBLAS where it has the kernel's form and prefer_library_gemm says it is faster;
//   always  OpenBLAS wherever it has the kernel's form (tests, comparisons).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "passes/kernel_graph.h"
#include "target/library_choice.h"
#include "vtc/options.h"

namespace vtc {

// Whether vtc was built where OpenBLAS is installed (the generated code then links it).
bool openblas_available();

// Sets Kernel::impl of every kernel of kg under its mode in `choice`. Without OpenBLAS, auto
// chooses the templates and always is an error.
void choose_kernel_impls(KernelGraph& kg, const LibraryChoice& choice);

// The values kernel k must find physical because of its implementation: a library kernel's
// matrix operands and output; none for a template kernel.
std::vector<const Value*> library_operands(const Kernel& k);

// One line per kernel, for `vtc explain`:
//   k3    gemm        openblas sgemm  M=16 N=4096 K=4096       [MatMul 'proj', Add 'res']
//   k4    norm        template                                     [LayerNormalization 'ln']
// (gemm kernels that OpenBLAS could compute show their folded shape whichever runs them; on
// cuda, convolutions cuDNN could compute show their window, channels and output, "3x3 64->32
// 16x160x160").
std::string kernel_impl_text(const KernelGraph& kg);

} // namespace vtc
