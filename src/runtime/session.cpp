// vtc::Session: import, canonicalise, lower and compile a model once; bind caller memory and
// run it (see include/vtc/vtc.h). Target "ref" runs the reference interpreter on the same
// graph, so callers can switch targets without changing code.
#include "vtc/vtc.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fmt/core.h>
#include <set>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "codegen/translation_unit.h"
#include "frontend/onnx_import.h"
#include "jit/progress.h"
#include "lower/program.h"
#include "ref/interpreter.h"
#include "runtime/library_profile.h"
#include "runtime/lowering.h"
#include "runtime/plan_timing.h"
#include "runtime/profile_cache.h"
#include "runtime/program_runner.h"
#include "target/target.h"

namespace vtc {

namespace {

bool overlap(const void* a, size_t an, const void* b, size_t bn) {
  if (an == 0 || bn == 0) return false;
  auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + bn && pb < pa + an;
}

std::string names_of(const std::vector<TensorSpec>& specs) {
  std::string s;
  for (const TensorSpec& t : specs)
    s += (s.empty() ? "" : ", ") + t.name;
  return s.empty() ? "none" : s;
}

// Every given name is a model tensor, every model tensor is given, each with its type.
void check_views(const ViewMap& given, const std::vector<TensorSpec>& specs, const char* what) {
  for (const auto& [name, view] : given) {
    bool known = std::any_of(specs.begin(), specs.end(),
                             [&](const TensorSpec& s) { return s.name == name; });
    VTC_CHECK(known) << "unknown " << what << " '" << name << "' (the model's " << what
                     << "s: " << names_of(specs) << ")";
  }
  for (const TensorSpec& spec : specs) {
    auto it = given.find(spec.name);
    VTC_CHECK(it != given.end()) << "missing " << what << " '" << spec.name << "' ("
                                 << type_str(spec.type) << ")";
    const TensorView& v = it->second;
    VTC_CHECK(v.type() == spec.type) << what << " '" << spec.name << "' is " << type_str(v.type())
                                     << ", the model expects " << type_str(spec.type);
    VTC_CHECK(v.data || v.nbytes() == 0) << what << " '" << spec.name << "' has no data";
  }
}

void check_options(const Options& o) {
  VTC_CHECK(o.threads >= 0) << "threads must be >= 0, got " << o.threads;
}

} // namespace

namespace {

// Moves a compiled plan's parts (options, program, unit, runner, input and output specs,
// constant bytes) from `from` to `to`, a Session::Impl or the plan it holds aside: the runner
// `to` had goes first, before the program and unit it reads.
template <typename To, typename From> void move_plan(To& to, From& from) {
  to.executor.reset();
  to.options = from.options;
  to.program = std::move(from.program);
  to.unit = std::move(from.unit);
  to.executor = std::move(from.executor);
  to.inputs = std::move(from.inputs);
  to.outputs = std::move(from.outputs);
  to.constant_bytes = from.constant_bytes;
}

} // namespace

struct Session::Impl {
  Options options;
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Program> program;
  std::unique_ptr<TranslationUnit> unit;
  std::unique_ptr<ProgramRunner> executor;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<double> no_step_times;
  int64_t constant_bytes = 0;
  std::optional<ProfiledPlan> profiled;

  // A compiled plan and what a session holds of it, moved out while another is timed. Its
  // runner reads its program and unit: it goes first, when one is destroyed or replaced.
  struct Built {
    Options options;
    std::unique_ptr<Program> program;
    std::unique_ptr<TranslationUnit> unit;
    std::unique_ptr<ProgramRunner> executor;
    std::vector<TensorSpec> inputs, outputs;
    int64_t constant_bytes = 0;

    Built() = default;
    Built(Built&&) = default;
    Built& operator=(Built&& other) noexcept {
      move_plan(*this, other);
      return *this;
    }
  };

  void check_donated() const;
  bool profiles() const;
  void keep_faster_plan(jit::Progress& progress);
  Built take();
  void put(Built b);
  // Lowers the graph under `o` and loads it as the session's plan (the session holding none:
  // take() the one it has first).
  void build(const Options& o, jit::Progress& progress);
  void init_reference();
  void init_program(Program p, std::optional<TranslationUnit> unit,
                    jit::Progress* progress = nullptr);
  void run_reference(const ViewMap& in, const ViewMap& out);
  void run_program(const ViewMap& in, const ViewMap& out);
};

void Session::Impl::check_donated() const {
  for (const std::string& name : options.donate) {
    bool found = std::any_of(graph->inputs.begin(), graph->inputs.end(),
                             [&](const Value* v) { return v->name == name; });
    std::string inputs;
    for (const Value* v : graph->inputs)
      inputs += (inputs.empty() ? "" : ", ") + v->name;
    VTC_CHECK(found) << "donated input '" << name << "' is not a graph input (inputs: " << inputs
                     << ")";
  }
}

void Session::Impl::init_reference() {
  std::set<std::string> donated(options.donate.begin(), options.donate.end());
  for (const Value* v : graph->inputs)
    inputs.push_back({v->name, v->type, donated.count(v->name) != 0, ""});
  for (const Value* v : graph->outputs)
    outputs.push_back({v->name, v->type, false, ""});
  for (const auto& v : graph->values())
    if (v->constant && !v->users.empty()) constant_bytes += int64_t(v->type.nbytes());
}

void Session::Impl::init_program(Program p, std::optional<TranslationUnit> given,
                                 jit::Progress* progress) {
  const Target& target = target_for(options.target);
  VTC_CHECK(target.compiles()) << "target " << target_kind_name(options.target)
                               << " compiles no program";
  program = std::make_unique<Program>(std::move(p));
  unit = std::make_unique<TranslationUnit>(
      given ? std::move(*given) : generate_translation_unit(*program, target.dialect()));
  bool generated = std::any_of(unit->entries.begin(), unit->entries.end(),
                               [](const std::string& e) { return !e.empty(); });
  jit::CompileOptions compile;
  if (generated) compile = target.compile_options(options);
  compile.progress = progress;
  executor = make_runner(*program, *unit, target, compile, options);

  std::set<std::string> donated(options.donate.begin(), options.donate.end());
  for (int id : program->inputs) {
    const BufferInfo& b = program->buffers[size_t(id)];
    inputs.push_back({b.name, b.type, donated.count(b.name) != 0, ""});
  }
  for (int id : program->outputs) {
    const BufferInfo& b = program->buffers[size_t(id)];
    std::string alias = b.alias_of >= 0 ? program->buffers[size_t(b.alias_of)].name : "";
    outputs.push_back({b.name, b.type, false, alias});
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    VTC_CHECK(!executor->input_written()[i] || inputs[i].donated)
        << "the program writes input '" << inputs[i].name << "', which is not donated";
  for (const BufferInfo& b : program->buffers)
    if (b.role == BufferRole::constant) constant_bytes += int64_t(b.type.nbytes());

  if (options.verbose) {
    int copies = 0, fallbacks = 0;
    for (const StepInfo& s : program->steps) {
      copies += s.is_copy;
      fallbacks += !s.fallback.empty();
    }
    fmt::print(stderr,
               "vtc: strategy {}: {} steps ({} copies, {} on the interpreter), arena {} "
               "bytes\n",
               program->strategy, program->steps.size(), copies, fallbacks,
               executor->plan().peak_bytes);
  }
}

// Whether the greedy program is profiled on the device: on a device target, with graphs
// replayed (not step timing), when greedy made any tensor virtual or the library rule put a
// node on a library.
bool Session::Impl::profiles() const {
  return options.profile && options.strategy == StrategyKind::greedy && !options.time_steps &&
         target_for(options.target).device_memory() &&
         (!program->storage.virtual_values.empty() || !library_nodes(*program).empty());
}

Session::Impl::Built Session::Impl::take() {
  Built b;
  move_plan(b, *this);
  inputs.clear();
  outputs.clear();
  constant_bytes = 0;
  return b;
}

void Session::Impl::put(Built b) {
  move_plan(*this, b);
}

void Session::Impl::build(const Options& o, jit::Progress& progress) {
  // A plan held is taken first (take()): init_program appends to inputs and outputs, and a
  // runner must go with the program it reads.
  VTC_CHECK(!executor && !program && inputs.empty() && outputs.empty())
      << "a session's plan rebuilt while it still holds one";
  options = o;
  progress.stage(std::string("choosing the ") + strategy_kind_name(o.strategy) + " strategy");
  Program p = lower_for_target(*graph, o);
  progress.stage("loading compiled code");
  init_program(std::move(p), std::nullopt, &progress);
}

// Times the greedy program (step by step where a node runs on a library); where a node does,
// lowers and times the greedy program with every kernel on vtc's code, and then the one
// taking the faster of the two for each node; keeps the fastest of them (a change only when
// faster by more than the timings' noise, 2 %). Then, where greedy made a tensor virtual,
// times the all-physical program of the same implementations and keeps it when faster.
void Session::Impl::keep_faster_plan(jit::Progress& progress) {
  constexpr double kNoise = 0.98, kNodeMargin = 0.05;
  const jit::CompileOptions compile = target_for(options.target).compile_options(options);
  const std::string key = profile_key(unit->source, compile.include_dirs, options);
  if (std::optional<ProfiledPlan> stored = read_profile(compile.cache_dir, key)) {
    const Options kept = kept_options(options, *stored);
    if (kept.library_nodes != options.library_nodes || kept.strategy != options.strategy) {
      const StrategyKind asked = options.strategy;
      const Built rule = take(); // init_program appends to the (then empty) inputs and outputs
      build(kept, progress);
      options.strategy = asked; // the strategy asked for, whichever program was kept
    }
    profiled = std::move(stored);
    return;
  }
  ProfiledPlan plan;
  PlanTiming timing;
  // Nodes the rule put on a library, unless the caller chose the mode (Options::library not
  // auto, or the node pinned in library_nodes).
  bool by_node = false;
  if (options.library == LibraryMode::automatic)
    for (const auto& [node, library] : library_nodes(*program))
      by_node |= !options.library_nodes.count(node);
  if (by_node) timing.step_runs = 10;
  progress.stage("timing the greedy plan on the device");
  const PlanTimes greedy = time_plan(*executor, *program, timing);
  plan.greedy_ms = greedy.ms;
  double best_ms = greedy.ms;
  if (by_node) {
    Built best = take();
    const Options rule = best.options;
    Options own = rule;
    own.library = LibraryMode::never;
    build(own, progress);
    progress.stage("timing the plan on vtc's kernels on the device");
    const PlanTimes vtc_times = time_plan(*executor, *program, timing);
    plan.vtc_kernels_ms = vtc_times.ms;
    plan.nodes =
        compare_nodes(*best.program, greedy.step_ms, *program, vtc_times.step_ms, kNodeMargin);
    std::erase_if(plan.nodes,
                  [&](const ProfiledNode& n) { return rule.library_nodes.count(n.node); });
    Built vtc_plan = take();
    const std::map<std::string, LibraryMode> modes = vtc_kernel_modes(plan.nodes);
    if (!modes.empty() && modes.size() < plan.nodes.size()) {
      Options mixed = rule;
      mixed.library_nodes.insert(modes.begin(), modes.end());
      build(mixed, progress);
      progress.stage("timing the per-node plan on the device");
      plan.per_node_ms = time_plan(*executor, *program, PlanTiming{}).ms;
      if (plan.per_node_ms < kNoise * best_ms) {
        best = take();
        best_ms = plan.per_node_ms;
        plan.kept = "greedy, per node";
      }
    }
    if (plan.vtc_kernels_ms < kNoise * best_ms) {
      best = std::move(vtc_plan);
      best_ms = plan.vtc_kernels_ms;
      plan.kept = "greedy, vtc's kernels";
    }
    put(std::move(best));
    for (ProfiledNode& n : plan.nodes)
      n.on_library = plan.kept == "greedy" || (plan.kept == "greedy, per node" && n.on_library);
  }
  if (!program->storage.virtual_values.empty()) {
    Options physical_options = options;
    physical_options.strategy = StrategyKind::none;
    Built kept = take();
    build(physical_options, progress);
    progress.stage("timing the all-physical plan on the device");
    plan.physical_ms = median_device_ms(*executor, *program);
    plan.kept_physical = plan.physical_ms < kNoise * best_ms;
    if (plan.kept_physical) {
      plan.kept = "all-physical";
      options.strategy = kept.options.strategy; // the strategy asked for; the program is none's
    } else {
      put(std::move(kept));
    }
  }
  if (options.verbose) {
    fmt::print(stderr, "vtc: greedy plan {:.4f} ms", plan.greedy_ms);
    if (plan.vtc_kernels_ms > 0)
      fmt::print(stderr, ", on vtc's kernels {:.4f}", plan.vtc_kernels_ms);
    if (plan.per_node_ms > 0) fmt::print(stderr, ", per node {:.4f}", plan.per_node_ms);
    if (plan.physical_ms > 0) fmt::print(stderr, ", all-physical {:.4f}", plan.physical_ms);
    fmt::print(stderr, " ms on the device: kept {}\n", plan.kept);
  }
  write_profile(compile.cache_dir, key, plan);
  profiled = plan;
}

void Session::Impl::run_reference(const ViewMap& in, const ViewMap& out) {
  TensorMap tensors;
  for (const TensorSpec& spec : inputs) {
    Tensor t(spec.type);
    if (t.nbytes()) std::memcpy(t.raw(), in.at(spec.name).data, t.nbytes());
    tensors.emplace(spec.name, std::move(t));
  }
  TensorMap results = vtc::run_reference(*graph, tensors);
  for (const TensorSpec& spec : outputs) {
    const Tensor& t = results.at(spec.name);
    if (t.nbytes()) std::memcpy(out.at(spec.name).data, t.raw(), t.nbytes());
  }
}

void Session::Impl::run_program(const ViewMap& in, const ViewMap& out) {
  std::vector<void*> in_ptr, out_ptr;
  for (const TensorSpec& s : inputs)
    in_ptr.push_back(in.at(s.name).data);
  for (const TensorSpec& s : outputs)
    out_ptr.push_back(out.at(s.name).data);
  auto in_bytes = [&](size_t i) { return inputs[i].type.nbytes(); };
  auto out_bytes = [&](size_t j) { return outputs[j].type.nbytes(); };
  const std::vector<int>& alias = executor->output_alias();

  // An aliased output is computed in place in its donated input's buffer: when the caller
  // wants it elsewhere, the input is copied there (once every check has passed) and that
  // memory is bound as the input.
  std::vector<std::pair<size_t, const void*>> copy_in; // (input position, its caller memory)
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (alias[j] < 0 || out_ptr[j] == in_ptr[size_t(alias[j])]) continue;
    size_t i = size_t(alias[j]);
    VTC_CHECK(!overlap(out_ptr[j], out_bytes(j), in_ptr[i], in_bytes(i)))
        << "output '" << outputs[j].name << "' partly overlaps the donated input '"
        << inputs[i].name << "' it is aliased to";
    copy_in.emplace_back(i, in_ptr[i]);
    in_ptr[i] = out_ptr[j];
  }
  // Any other output sharing memory with another bound tensor is computed in scratch memory
  // and copied out afterwards, so no step reads what another has half written.
  std::vector<std::pair<size_t, Tensor>> scratch;
  scratch.reserve(outputs.size());
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (alias[j] >= 0) continue;
    bool shared = false;
    for (size_t i = 0; i < inputs.size(); ++i)
      shared |= overlap(out_ptr[j], out_bytes(j), in_ptr[i], in_bytes(i));
    for (size_t k = 0; k < outputs.size(); ++k)
      shared |= k != j && outputs[k].name != outputs[j].name &&
                overlap(out_ptr[j], out_bytes(j), out_ptr[k], out_bytes(k));
    if (!shared) continue;
    scratch.emplace_back(j, Tensor(outputs[j].type));
    out_ptr[j] = scratch.back().second.raw();
  }
  // A buffer the program writes may not be another input's memory.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!executor->input_written()[i]) continue;
    for (size_t k = 0; k < inputs.size(); ++k)
      VTC_CHECK(k == i || !overlap(in_ptr[i], in_bytes(i), in_ptr[k], in_bytes(k)))
          << "donated input '" << inputs[i].name << "' shares memory with input '" << inputs[k].name
          << "'";
  }
  for (const auto& [i, from] : copy_in)
    executor->copy_memory(in_ptr[i], from, in_bytes(i));
  executor->run(in_ptr, out_ptr);
  for (auto& [j, t] : scratch)
    executor->copy_memory(out.at(outputs[j].name).data, t.raw(), t.nbytes());
}

Session::Session(const std::string& model_path, Options options) : impl_(std::make_unique<Impl>()) {
  check_options(options);
  impl_->options = std::move(options);
  jit::Progress progress(impl_->options.progress);
  progress.stage("importing " + std::filesystem::path(model_path).filename().string());
  ImportOptions import;
  import.dims = impl_->options.dims;
  impl_->graph = std::make_unique<Graph>(import_onnx_file(model_path, import));
  canonicalize_for_target(*impl_->graph, impl_->options.target);
  impl_->check_donated();
  if (!target_for(impl_->options.target).compiles()) {
    impl_->init_reference();
    return;
  }
  progress.stage(std::string("choosing the ") + strategy_kind_name(impl_->options.strategy) +
                 " strategy");
  Program program = lower_for_target(*impl_->graph, impl_->options);
  progress.stage("loading compiled code");
  impl_->init_program(std::move(program), std::nullopt, &progress);
  if (impl_->profiles()) impl_->keep_faster_plan(progress);
}

Session::Session(std::unique_ptr<Graph> graph, Program program, Options options)
    : Session(std::move(graph), std::move(program), std::optional<TranslationUnit>(),
              std::move(options)) {}

Session::Session(std::unique_ptr<Graph> graph, Program program, TranslationUnit unit,
                 Options options)
    : Session(std::move(graph), std::move(program), std::optional<TranslationUnit>(std::move(unit)),
              std::move(options)) {}

Session::Session(std::unique_ptr<Graph> graph, Program program, std::optional<TranslationUnit> unit,
                 Options options)
    : impl_(std::make_unique<Impl>()) {
  check_options(options);
  VTC_CHECK(graph) << "a Session needs the graph its program was lowered from";
  impl_->options = std::move(options);
  impl_->graph = std::move(graph);
  impl_->check_donated();
  impl_->init_program(std::move(program), std::move(unit));
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

const std::vector<TensorSpec>& Session::inputs() const {
  return impl_->inputs;
}
const std::vector<TensorSpec>& Session::outputs() const {
  return impl_->outputs;
}

void Session::run(const ViewMap& inputs, const ViewMap& outputs) {
  check_views(inputs, impl_->inputs, "input");
  check_views(outputs, impl_->outputs, "output");
  if (impl_->executor)
    impl_->run_program(inputs, outputs);
  else
    impl_->run_reference(inputs, outputs);
}

HostTensorMap Session::run(const ViewMap& inputs) {
  HostTensorMap results;
  ViewMap views;
  for (const TensorSpec& s : impl_->outputs) {
    if (results.count(s.name)) continue;
    Tensor& t = results.emplace(s.name, Tensor(s.type)).first->second;
    views.emplace(s.name, TensorView::of(t));
  }
  run(inputs, views);
  return results;
}

HostTensorMap Session::run(const HostTensorMap& inputs) {
  // Inputs the program overwrites without an output to hold the result are copied first;
  // aliased ones are copied into their (newly allocated) outputs by run().
  std::set<std::string> clobbered;
  if (impl_->executor) {
    std::set<int> aliased(impl_->executor->output_alias().begin(),
                          impl_->executor->output_alias().end());
    for (size_t i = 0; i < impl_->inputs.size(); ++i)
      if (impl_->executor->input_written()[i] && !aliased.count(int(i)))
        clobbered.insert(impl_->inputs[i].name);
  }
  std::vector<Tensor> copies;
  copies.reserve(clobbered.size());
  ViewMap views;
  for (const auto& [name, t] : inputs) {
    if (clobbered.count(name)) {
      copies.push_back(t);
      views.emplace(name, TensorView::of(copies.back()));
    } else {
      views.emplace(name, TensorView::of(const_cast<Tensor&>(t)));
    }
  }
  return run(views);
}

std::optional<ProfiledPlan> Session::profiled_plan() const {
  return impl_->profiled;
}

int64_t Session::peak_bytes() const {
  return impl_->executor ? impl_->executor->plan().peak_bytes : 0;
}
int64_t Session::constant_bytes() const {
  return impl_->constant_bytes;
}
int64_t Session::workspace_bytes() const {
  return impl_->executor ? impl_->executor->workspace_bytes() : 0;
}

std::vector<std::pair<std::string, int64_t>> Session::workspace_parts() const {
  return impl_->executor ? impl_->executor->workspace_parts()
                         : std::vector<std::pair<std::string, int64_t>>{};
}

double Session::last_run_device_ms() const {
  return impl_->executor ? impl_->executor->run_device_ms() : -1;
}

const std::vector<double>& Session::last_step_times() const {
  return impl_->executor ? impl_->executor->step_times() : impl_->no_step_times;
}

double Session::compile_seconds() const {
  if (!impl_->executor || !impl_->executor->compiled()) return 0;
  return impl_->executor->compiled()->seconds;
}

int Session::compiled_objects() const {
  if (!impl_->executor || !impl_->executor->compiled()) return 0;
  return impl_->executor->compiled()->objects;
}

int Session::threads() const {
  if (impl_->options.threads > 0) return impl_->options.threads;
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

bool Session::has_program() const {
  return impl_->program != nullptr;
}

const Program& Session::program() const {
  VTC_CHECK(impl_->program) << "target " << target_kind_name(impl_->options.target)
                            << " runs the graph on the reference interpreter: no program";
  return *impl_->program;
}

const TranslationUnit& Session::translation_unit() const {
  VTC_CHECK(impl_->unit) << "target " << target_kind_name(impl_->options.target)
                         << " runs the graph on the reference interpreter: no translation unit";
  return *impl_->unit;
}

const Graph& Session::graph() const {
  return *impl_->graph;
}
const Options& Session::options() const {
  return impl_->options;
}

} // namespace vtc
