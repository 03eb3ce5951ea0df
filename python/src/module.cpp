// The extension module vtc._vtc: vtc's errors as Python exceptions (vtc::Error as _vtc.Error,
// a RuntimeError; vtc::Unsupported as its subclass _vtc.Unsupported), then the Session class.
// The Python package (python/vtc) builds its user-facing API on these.
#include "bindings.h"

namespace nb = nanobind;

NB_MODULE(_vtc, m) {
  m.doc() = "vtc's C++ API (include/vtc/vtc.h); use the package vtc, not this module";
  nb::exception<vtc::Error> error(m, "Error", PyExc_RuntimeError);
  nb::exception<vtc::Unsupported>(m, "Unsupported", error);
  vtc::python::bind_session(m);
}
