// vtc::compile_ahead (vtc.h): the Session's pipeline up to its generated code — import with the
// bound dimensions, canonicalisation, the strategy, lowering, code generation — then, on cuda,
// NVRTC for the architecture asked for instead of the one of a device here, so that the cache
// can be filled on a machine without the GPU that will run the model. On cpu the code is for
// this machine, so a Session does it all.
#include <algorithm>
#include <filesystem>

#include "codegen/translation_unit.h"
#include "device/cuda_device.h"
#include "device/cuda_driver.h"
#include "frontend/onnx_import.h"
#include "jit/progress.h"
#include "lower/program.h"
#include "runtime/lowering.h"
#include "target/cpu_unit_compiler.h"
#include "target/cuda_target.h"
#include "vtc/error.h"
#include "vtc/vtc.h"

namespace vtc {

namespace {

// The driver a unit is keyed by: the one asked for, else this machine's, else the toolkit's.
int driver_version_for(int asked) {
  if (asked > 0) return asked;
  try {
    return device::cuda_device().driver_version;
  } catch (const Error&) {
  }
#if VTC_HAS_CUDA_DRIVER
  return CUDA_VERSION;
#else
  VTC_CHECK(false) << "target cuda: no GPU driver here and vtc was built without the CUDA "
                      "toolkit: name the driver version to compile for";
  return 0;
#endif
}

std::string arch_for(const std::string& asked) {
  if (!asked.empty()) return asked;
  return device::cuda_device().arch(); // throws, naming what is missing, without a GPU
}

CompiledAhead cpu_ahead(const std::string& model_path, const Options& options) {
  Session session(model_path, options);
  CompiledAhead out;
  out.arch = "host";
  const TranslationUnit& unit = session.translation_unit();
  out.kernels = unit.kernels;
  out.seconds = session.compile_seconds();
  out.cached = out.seconds == 0;
  out.objects = session.compiled_objects();
  return out;
}

} // namespace

CompiledAhead compile_ahead(const std::string& model_path, const Options& options,
                            const AheadOfTime& ahead) {
  if (options.target != TargetKind::cuda) {
    VTC_CHECK(ahead.cuda_arch.empty() && ahead.cuda_driver_version == 0)
        << "a GPU architecture or driver is for target cuda, not "
        << target_kind_name(options.target);
    return cpu_ahead(model_path, options);
  }
  jit::Progress progress(options.progress);
  progress.stage("importing " + std::filesystem::path(model_path).filename().string());
  ImportOptions import;
  import.dims = options.dims;
  Graph graph = import_onnx_file(model_path, import);
  canonicalize_for_target(graph, TargetKind::cuda);
  for (const std::string& name : options.donate)
    VTC_CHECK(std::any_of(graph.inputs.begin(), graph.inputs.end(),
                          [&](const Value* v) { return v->name == name; }))
        << "donated input '" << name << "' is not a graph input";
  progress.stage(std::string("choosing the ") + strategy_kind_name(options.strategy) + " strategy");
  const Program program = lower_for_target(graph, options);
  const Target& target = target_for(TargetKind::cuda);
  const TranslationUnit unit = generate_translation_unit(program, target.dialect());
  CompiledAhead out;
  out.arch = arch_for(ahead.cuda_arch);
  out.kernels = int(unit.entry_texts.size());
  if (unit.entry_texts.empty()) return out;
  jit::CompileOptions compile = target.compile_options(options);
  compile.progress = &progress;
  const CompiledCudaUnit code =
      compile_cuda_ahead(unit, compile, out.arch, driver_version_for(ahead.cuda_driver_version));
  out.objects = int(code.parts.size());
  out.cached = code.cached;
  out.seconds = code.seconds;
  return out;
}

} // namespace vtc
