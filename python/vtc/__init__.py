"""vtc: an ONNX inference compiler that removes data movement, for Python.

    import vtc
    session = vtc.Session("model.onnx", target="cpu", dims={"batch": 1})
    outputs = session.run({"x": x})          # numpy in, numpy out

vtc.Session is vtc's own interface (include/vtc/vtc.h); vtc.InferenceSession follows
onnxruntime's. Errors vtc reports are vtc.Error (a RuntimeError) carrying vtc's one-line
message; vtc.Unsupported, its subclass, marks a valid model using something vtc lacks.
"""

from ._onnxruntime import InferenceSession, NodeArg, SessionOptions, get_available_providers
from ._session import Session, TensorInfo
from ._vtc import Error, Unsupported

__all__ = [
    "Error",
    "InferenceSession",
    "NodeArg",
    "Session",
    "SessionOptions",
    "TensorInfo",
    "Unsupported",
    "get_available_providers",
]
