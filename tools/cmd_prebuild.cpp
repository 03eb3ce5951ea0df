// `vtc prebuild`: builds what the cpu target's generated code would otherwise build in a cache
// before compiling its first model — the kernel headers precompiled, the GEMM engines' shared
// instances — into a directory every later compile reads them from (CompileOptions::
// prebuilt_dir; by default the build tree's jit-prebuilt, which the build fills this way).
#include <fmt/core.h>

#include "commands.h"
#include "target/cpu_unit_compiler.h"
#include "target/target.h"
#include "vtc/vtc.h"

namespace vtc::cli {

namespace {

struct PrebuildArgs {
  std::string out;
  bool quiet = false;
};

int prebuild(const PrebuildArgs& args) {
  Options options;
  options.target = TargetKind::cpu;
  jit::CompileOptions c = target_for(TargetKind::cpu).compile_options(options);
  if (!args.out.empty()) c.cache_dir = args.out;
  c.prebuilt_dir.clear();
  const PrebuiltCpuObjects p = prebuild_cpu_objects(c);
  if (!args.quiet || p.built > 0)
    fmt::print("prebuild: {} of {} entries built in {:.1f} s ({})\n", p.built, p.entries, p.seconds,
               c.cache_dir);
  return 0;
}

} // namespace

void add_prebuild_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PrebuildArgs>();
  CLI::App* cmd = app.add_subcommand(
      "prebuild", "Precompile the cpu target's kernel headers and shared GEMM instances once, "
                  "for every model's first compile");
  cmd->add_option("--out", args->out,
                  "the directory (default: $VTC_PREBUILT_DIR, else the build tree's "
                  "jit-prebuilt)");
  cmd->add_flag("-q,--quiet", args->quiet, "print nothing when everything was there");
  cmd->callback([args, &exit_code] { exit_code = prebuild(*args); });
}

} // namespace vtc::cli
