// The profiled choice, node by node, between a library and vtc's own kernel (on cuda: cuDNN
// and cuBLASLt convolutions against vtc's implicit GEMM and direct kernels). Two plans of one
// graph are timed step by step on the device: one under the library rule, one with every
// kernel on vtc's code. A node's time in a plan is its kernel step's plus that of the copies
// feeding only that step (a library reads physical operands, so it may need copies vtc's
// kernel does not). The node keeps the library where that is no slower than vtc's kernel by
// more than the margin; the modes returned (Options::library_nodes) lower the mixed plan.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lower/program.h"
#include "vtc/options.h"
#include "vtc/vtc.h"

namespace vtc {

// The anchor nodes of `p`'s kernel steps that run on a library, with the library's name
// (kernel_impl_name), in step order.
std::vector<std::pair<std::string, std::string>> library_nodes(const Program& p);

// The milliseconds node `node`'s steps took in `p` (step_ms per step): its kernel step and
// the copy steps whose outputs only that step reads. 0 where no kernel step anchors it.
double node_ms(const Program& p, const std::vector<double>& step_ms, const std::string& node);

// Every library node of `library_plan` timed in both plans; on_library is false where vtc's
// kernel was faster by more than `margin` (a fraction of the library's time).
std::vector<ProfiledNode> compare_nodes(const Program& library_plan,
                                        const std::vector<double>& library_step_ms,
                                        const Program& vtc_plan,
                                        const std::vector<double>& vtc_step_ms, double margin);

// Options::library_nodes for the mixed plan: `never` for each node vtc's kernel won.
std::map<std::string, LibraryMode> vtc_kernel_modes(const std::vector<ProfiledNode>& nodes);

} // namespace vtc
