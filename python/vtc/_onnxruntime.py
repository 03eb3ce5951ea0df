"""onnxruntime's InferenceSession API over vtc.Session, so that a script written for
onnxruntime switches to vtc by changing its import (`import vtc as ort`).

Execution providers name vtc targets: CPUExecutionProvider is cpu, CUDAExecutionProvider
cuda; any other provider is refused with ValueError. As onnxruntime does, a later provider in
the list is used when an earlier one cannot run the model here (a warning says why). vtc
compiles for fixed shapes: a model with symbolic dimensions needs their sizes up front,
given as onnxruntime does with SessionOptions.add_free_dimension_override_by_name.
"""

import os
import tempfile
import warnings

from . import _dtypes
from ._session import Session
from ._vtc import Error

PROVIDER_TARGETS = {"CPUExecutionProvider": "cpu", "CUDAExecutionProvider": "cuda"}


def get_available_providers():
    """The execution providers vtc implements."""
    return list(PROVIDER_TARGETS)


class SessionOptions:
    """The SessionOptions fields vtc uses: intra_op_num_threads (kernel threads, 0 for all
    cores) and symbolic dimension sizes; `vtc` holds further vtc.Session keyword arguments
    (strategy, donate, cache_dir, library, quiet)."""

    def __init__(self):
        self.intra_op_num_threads = 0
        self.free_dimension_overrides = {}
        self.vtc = {}

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        self.free_dimension_overrides[dim_name] = int(dim_value)


class NodeArg:
    """An input or output as onnxruntime describes it: name, shape, type ("tensor(float)")."""

    def __init__(self, info):
        self.name = info.name
        self.shape = list(info.shape)
        self.type = _dtypes.ONNXRUNTIME_TYPE[info.vtc_dtype]

    def __repr__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


def _provider_names(providers):
    names = []
    for p in providers:
        name = p[0] if isinstance(p, (tuple, list)) else p
        if name not in PROVIDER_TARGETS:
            raise ValueError(
                f"unknown execution provider '{name}' (vtc runs {', '.join(PROVIDER_TARGETS)})"
            )
        names.append(name)
    return names


def _session_arguments(sess_options):
    """vtc.Session keyword arguments from a vtc or onnxruntime SessionOptions."""
    if sess_options is None:
        return {}
    args = dict(getattr(sess_options, "vtc", {}))
    args["threads"] = int(getattr(sess_options, "intra_op_num_threads", 0))
    dims = getattr(sess_options, "free_dimension_overrides", {})
    if dims:
        args["dims"] = dict(dims)
    return args


class InferenceSession:
    """onnxruntime.InferenceSession's interface, compiled by vtc."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 **kwargs):
        names = _provider_names(providers or ["CPUExecutionProvider"])
        self._sess_options = sess_options
        arguments = _session_arguments(sess_options)
        if isinstance(path_or_bytes, (bytes, bytearray)):
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "model.onnx")
                with open(path, "wb") as f:
                    f.write(path_or_bytes)
                self._open(path, names, arguments)
        else:
            self._open(os.fspath(path_or_bytes), names, arguments)
        self._inputs = [NodeArg(i) for i in self._session.inputs]
        self._outputs = [NodeArg(o) for o in self._session.outputs]

    def _open(self, path, names, arguments):
        for k, name in enumerate(names):
            try:
                self._session = Session(path, target=PROVIDER_TARGETS[name], **arguments)
                self._providers = [name]
                return
            except Error as e:
                if k + 1 == len(names):
                    raise
                warnings.warn(f"vtc: {name} not used ({e}); trying {names[k + 1]}")

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_providers(self):
        return list(self._providers)

    def get_session_options(self):
        return self._sess_options

    def run(self, output_names, input_feed, run_options=None):
        """The outputs named (all, in the model's order, when None or empty), as a list."""
        known = [o.name for o in self._outputs]
        names = list(output_names) if output_names else known
        for name in names:
            if name not in known:
                raise ValueError(f"unknown output '{name}' (the model's outputs: {', '.join(known)})")
        results = self._session.run(input_feed)
        return [results[name] for name in names]
