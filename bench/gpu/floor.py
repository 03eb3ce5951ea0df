"""The floor of a case: the least time any implementation could take on the measured device.

Bytes that must cross device memory — every weight, input and output once, an output held
in a donated input's buffer (the KV cache) not again — over the copy bandwidth measured in
the same run; FLOPs over the matrix rate measured in the same run; the floor is the larger
of the two. Bytes are read from the ONNX file (initializer and graph input/output types, no
weights loaded), independently of the systems being measured; FLOPs are vtc's per-step
estimates (they count the arithmetic of each kernel once whatever the strategy).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

# ONNX TensorProto element type -> bytes per element.
ELEMENT_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8,
                 16: 2}


@dataclass
class FloorBytes:
    weights: int
    inputs: int
    outputs: int  # outputs not held in a donated input's buffer

    @property
    def total(self) -> int:
        return self.weights + self.inputs + self.outputs

    def to_json(self) -> dict:
        return {**asdict(self), "total": self.total}


def tensor_bytes(elem_type: int, dims: list[int]) -> int:
    if elem_type not in ELEMENT_BYTES:
        raise ValueError(f"element type {elem_type} has no size here")
    n = 1
    for d in dims:
        if d < 0:
            raise ValueError(f"dimension {d} is not static")
        n *= d
    return n * ELEMENT_BYTES[elem_type]


def value_bytes(info) -> int:
    t = info.type.tensor_type
    dims = []
    for d in t.shape.dim:
        if not d.HasField("dim_value"):
            raise ValueError(f"{info.name}: dimension '{d.dim_param}' is not static")
        dims.append(d.dim_value)
    return tensor_bytes(t.elem_type, dims)


def inferred_outputs(model) -> dict:
    """The graph outputs as ONNX shape inference gives them from the inputs' static shapes,
    their declared shapes dropped (an exporter may name an output's dimensions although the
    inputs fix them)."""
    import onnx
    from onnx import shape_inference

    m = onnx.ModelProto()
    m.CopyFrom(model)
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    return {o.name: o for o in shape_inference.infer_shapes(m).graph.output}


def model_bytes(path: str, aliases: dict[str, str],
                output_shapes: dict[str, tuple] | None = None) -> FloorBytes:
    """The bytes of `path`'s weights (initializers and Constant nodes), inputs and outputs;
    outputs named in `aliases` (output -> donated input) are not counted. An output whose
    declared shape is symbolic is sized by `output_shapes` (name -> the shape a run gave it)
    where given, else by shape inference."""
    import onnx

    model = onnx.load(path, load_external_data=False)
    g = model.graph
    initializers = {t.name for t in g.initializer}
    weights = sum(tensor_bytes(t.data_type, list(t.dims)) for t in g.initializer)
    for node in g.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    weights += tensor_bytes(a.t.data_type, list(a.t.dims))
    inputs = sum(value_bytes(i) for i in g.input if i.name not in initializers)
    outputs, inferred = 0, None
    for o in g.output:
        if o.name in aliases:
            continue
        try:
            outputs += value_bytes(o)
        except ValueError:
            if output_shapes and o.name in output_shapes:
                outputs += tensor_bytes(o.type.tensor_type.elem_type, list(output_shapes[o.name]))
                continue
            inferred = inferred if inferred is not None else inferred_outputs(model)
            if o.name not in inferred:
                raise
            outputs += value_bytes(inferred[o.name])
    return FloorBytes(weights, inputs, outputs)


def floor_ms(total_bytes: int, flops: float, copy_bytes_per_s: float | None,
             matrix_flops_per_s: float | None) -> dict:
    """{"floor_ms", "bytes_ms", "flops_ms", "bound"}; None where a ceiling is unknown."""
    bytes_ms = total_bytes / copy_bytes_per_s * 1e3 if copy_bytes_per_s else None
    flops_ms = flops / matrix_flops_per_s * 1e3 if matrix_flops_per_s and flops else None
    if bytes_ms is None:
        # Without the copy bandwidth the compute term alone is not a floor of record.
        return {"floor_ms": None, "bytes_ms": None, "flops_ms": flops_ms, "bound": None}
    if flops_ms is not None and flops_ms > bytes_ms:
        return {"floor_ms": flops_ms, "bytes_ms": bytes_ms, "flops_ms": flops_ms,
                "bound": "flops"}
    return {"floor_ms": bytes_ms, "bytes_ms": bytes_ms, "flops_ms": flops_ms, "bound": "bytes"}


def program_flops(vtc_strategy: dict) -> int:
    """The sum of vtc's per-step FLOP estimates (a `vtc bench --json` strategy entry)."""
    return sum(int(s.get("flops", 0)) for s in vtc_strategy.get("step_times", []))
