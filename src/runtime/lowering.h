// The Session's one call into the compiler: vtc::Options (strategy, donated inputs) turned
// into the lowering's options, and the canonical graph lowered to a Program.
#pragma once

#include "lower/program.h"
#include "vtc/vtc.h"

namespace vtc {

Program lower_for_target(const Graph& g, const Options& options);

} // namespace vtc
