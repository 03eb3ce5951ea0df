// The parts of the extension module vtc._vtc, each defined in its own file and registered by
// module.cpp: the Session class and the strategy of a session as Python data.
#pragma once

#include <nanobind/nanobind.h>

#include "vtc/vtc.h"

namespace vtc::python {

// Registers _vtc.Session: construction from keyword options, inputs/outputs as plain tuples,
// run on caller-allocated arrays, peak_bytes, compile_seconds, explain.
void bind_session(nanobind::module_& m);

// What the session's strategy made of each data-movement node, as a list of dicts (the data
// `vtc explain` prints).
nanobind::list explain_as_data(const Session& session);

} // namespace vtc::python
