// Bounds as IndexBounds<NB>{{...}}; the step index is passed so that the record names the
// check that failed.
#include "codegen/index_check_call.h"

#include "kernels/cuda/index_check.h"
#include "vtc/error.h"

namespace vtc {

KernelCall index_check_call(const StepInfo& step, size_t step_index, int status_slot,
                            AccessorEmitter& g) {
  VTC_CHECK(step.check && !step.operands.empty())
      << "step " << step_index << " '" << step.name << "' is an index check without its check";
  const IndexCheck& check = *step.check;
  std::string sizes;
  for (size_t b = 0; b < check.bounds.size(); ++b)
    sizes += (b ? ", " : "") + std::to_string(check.bounds[b].size);
  const std::string bounds =
      "IndexBounds<" + std::to_string(check.bounds.size()) + ">{{" + sizes + "}}";
  const Acc indices = g.stored(check.indices);
  const std::string status = g.site().buffer(status_slot);
  std::vector<std::string> args{indices.init, shape_array(check.indices->type.shape), bounds,
                                status};
  const bool cuda = g.dialect().library() == KernelLibrary::cuda;
  if (cuda) args.push_back(g.site().buffer(status_slot + 1));
  args.push_back(g.site().integer(int64_t(step_index)));
  KernelCall call{"check_indices", {}, std::move(args)};
  if (cuda) call.launch = kernels::check_indices_launch();
  return call;
}

} // namespace vtc
