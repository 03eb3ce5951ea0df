// _vtc.Session: vtc::Session for the Python layer. Options arrive as keyword arguments in the
// command line's spellings (target "cpu", strategy "greedy", library "auto"), a bad spelling
// raising ValueError. Tensors cross as C-contiguous host arrays of the model's element size,
// bound without copies; the Python layer (python/vtc/_session.py) converts dtypes, allocates
// the outputs and decides where a donated input's aliased output goes. The GIL is released
// while a model compiles and runs; a lock keeps two threads from running one session at once.
#include <algorithm>
#include <mutex>

#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"

namespace nb = nanobind;

namespace vtc::python {

namespace {

using InputArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using OutputArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

struct BoundSession {
  Session session;
  std::mutex running;
};

template <typename Kind>
Kind parse_or_raise(std::optional<Kind> parsed, const char* what, const std::string& given,
                    const char* choices) {
  if (!parsed)
    throw nb::value_error(
        (std::string("unknown ") + what + " '" + given + "' (" + choices + ")").c_str());
  return *parsed;
}

Options make_options(const std::string& target, const std::string& strategy,
                     std::vector<std::string> donate, std::map<std::string, int64_t> dims,
                     const std::string& cache_dir, int threads, const std::string& library,
                     bool quiet, const std::string& source_dir) {
  Options o;
  o.target = parse_or_raise(parse_target_kind(target), "target", target, "cpu, cuda, ref");
  o.strategy =
      parse_or_raise(parse_strategy_kind(strategy), "strategy", strategy, "none, type1, greedy");
  o.library =
      parse_or_raise(parse_library_mode(library), "library", library, "auto, never, always");
  if (threads < 0)
    throw nb::value_error(("threads must be >= 0, got " + std::to_string(threads)).c_str());
  o.donate = std::move(donate);
  o.dims = std::move(dims);
  o.threads = threads;
  o.cache_dir = cache_dir;
  o.source_dir = source_dir;
  o.progress = !quiet;
  return o;
}

// name, dtype name ("f32", "bf16", ...), shape, donated, the donated input an output aliases.
using SpecTuple = std::tuple<std::string, std::string, std::vector<int64_t>, bool, std::string>;

std::vector<SpecTuple> spec_tuples(const std::vector<TensorSpec>& specs) {
  std::vector<SpecTuple> out;
  for (const TensorSpec& s : specs)
    out.emplace_back(s.name, dtype_name(s.type.dtype), s.type.shape, s.donated, s.aliased_input);
  return out;
}

// A view of `array` typed as the model's tensor of that name; names the model does not know
// are passed on for Session::run to report.
template <typename Array>
TensorView view_of(const Array& array, const std::string& name,
                   const std::vector<TensorSpec>& specs, const char* what) {
  TensorView v;
  auto spec =
      std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; });
  if (spec != specs.end()) {
    v.dtype = spec->type.dtype;
    size_t bytes = array.dtype().bits / 8;
    if (bytes != dtype_size(v.dtype))
      throw nb::value_error((std::string(what) + " '" + name + "' has " + std::to_string(bytes) +
                             "-byte elements, the model expects " + dtype_name(v.dtype))
                                .c_str());
  }
  for (size_t d = 0; d < array.ndim(); ++d)
    v.shape.push_back(int64_t(array.shape(d)));
  v.data = const_cast<void*>(static_cast<const void*>(array.data()));
  return v;
}

void run(BoundSession& bound, const std::map<std::string, InputArray>& inputs,
         const std::map<std::string, OutputArray>& outputs) {
  ViewMap in, out;
  for (const auto& [name, array] : inputs)
    in.emplace(name, view_of(array, name, bound.session.inputs(), "input"));
  for (const auto& [name, array] : outputs)
    out.emplace(name, view_of(array, name, bound.session.outputs(), "output"));
  nb::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(bound.running);
  bound.session.run(in, out);
}

} // namespace

void bind_session(nb::module_& m) {
  nb::class_<BoundSession>(m, "Session")
      .def(
          "__init__",
          [](BoundSession* self, const std::string& path, const std::string& target,
             const std::string& strategy, std::vector<std::string> donate,
             std::map<std::string, int64_t> dims, const std::string& cache_dir, int threads,
             const std::string& library, bool quiet, const std::string& source_dir) {
            Options o = make_options(target, strategy, std::move(donate), std::move(dims),
                                     cache_dir, threads, library, quiet, source_dir);
            nb::gil_scoped_release release;
            new (self) BoundSession{Session(path, std::move(o)), {}};
          },
          nb::arg("path"), nb::arg("target"), nb::arg("strategy"), nb::arg("donate"),
          nb::arg("dims"), nb::arg("cache_dir"), nb::arg("threads"), nb::arg("library"),
          nb::arg("quiet"), nb::arg("source_dir"))
      .def_prop_ro("inputs", [](const BoundSession& b) { return spec_tuples(b.session.inputs()); })
      .def_prop_ro("outputs",
                   [](const BoundSession& b) { return spec_tuples(b.session.outputs()); })
      .def("run", &run, nb::arg("inputs"), nb::arg("outputs"))
      .def_prop_ro("peak_bytes", [](const BoundSession& b) { return b.session.peak_bytes(); })
      .def_prop_ro("constant_bytes",
                   [](const BoundSession& b) { return b.session.constant_bytes(); })
      .def_prop_ro("compile_seconds",
                   [](const BoundSession& b) { return b.session.compile_seconds(); })
      .def_prop_ro("threads", [](const BoundSession& b) { return b.session.threads(); })
      .def_prop_ro("last_step_times",
                   [](const BoundSession& b) { return b.session.last_step_times(); })
      .def("explain", [](const BoundSession& b) { return explain_as_data(b.session); });
}

} // namespace vtc::python
