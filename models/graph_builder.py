"""Graph-building helpers shared by the workload generators.

A GraphBuilder accumulates nodes, initializers and graph inputs/outputs with unique,
readable, scope-prefixed names ("attn/qkv_proj") and produces an ONNX model at opset 17 and
IR version 8, the newest that Debian's libonnx 1.12 parses. Weights are seeded random values
generated in float32 and rounded to the model's element type, so the f32, f16 and bf16
variants of a workload share their weights up to rounding. The free functions below add
the layers the workloads have in common (linear, convolution, batch norm, RMSNorm,
activations) the way PyTorch's exporters write them.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Any, Callable

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8

ELEM_TYPES = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}
NUMPY_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def round_to_dtype(array: np.ndarray, dtype: str) -> np.ndarray:
    """float32 copy of `array` whose values are exactly representable in `dtype`."""
    return np.asarray(array, np.float32).astype(NUMPY_TYPES[dtype]).astype(np.float32)


@dataclass(frozen=True)
class Workload:
    """One generated workload: its configurations, element types and input maker.

    build(config, dtype, batch) returns the model; make_inputs(config, batch, rng) returns
    sensible float32/int64 values for every graph input (callers round them to the
    model's element type).
    """

    name: str
    configs: dict[str, Any]
    dtypes: tuple[str, ...]
    build: Callable[[Any, str, int], onnx.ModelProto]
    make_inputs: Callable[[Any, int, np.random.Generator], dict[str, np.ndarray]]


class GraphBuilder:
    """Accumulates an ONNX graph; every value is referred to by its tensor name."""

    def __init__(self, name: str, dtype: str, seed: int = 0):
        self.name = name
        self.dtype = dtype
        self.elem = ELEM_TYPES[dtype]
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._scopes: list[str] = []
        self._used: set[str] = set()

    @contextlib.contextmanager
    def scope(self, name: str):
        self._scopes.append(name)
        try:
            yield
        finally:
            self._scopes.pop()

    def _unique(self, base: str) -> str:
        full = "/".join(self._scopes + [base])
        name, k = full, 1
        while name in self._used:
            name = f"{full}_{k}"
            k += 1
        self._used.add(name)
        return name

    # Graph inputs and outputs.
    def input(self, name: str, shape: list[int], elem: int | None = None) -> str:
        self._used.add(name)
        self.inputs.append(helper.make_tensor_value_info(name, elem or self.elem, shape))
        return name

    def output(self, value: str, name: str, shape: list[int], elem: int | None = None) -> str:
        """Declares `value` as graph output `name`, renaming the tensor everywhere."""
        for node in self.nodes:
            node.input[:] = [name if v == value else v for v in node.input]
            node.output[:] = [name if v == value else v for v in node.output]
        self._used.add(name)
        self.outputs.append(helper.make_tensor_value_info(name, elem or self.elem, shape))
        return name

    # Initializers.
    def const(self, name: str, array: np.ndarray) -> str:
        """Initializer holding `array` as given (shape operands, index tables)."""
        unique = self._unique(name)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), unique))
        return unique

    def ints(self, name: str, values: list[int]) -> str:
        return self.const(name, np.array(values, np.int64))

    def scalar(self, name: str, value: float, dtype: str | None = None) -> str:
        """Scalar initializer in the model's element type (or `dtype`)."""
        return self.const(name, np.array(value, NUMPY_TYPES[dtype or self.dtype]))

    def tensor(self, name: str, array: np.ndarray) -> str:
        """Initializer holding float32 `array` rounded to the model's element type."""
        return self.const(name, np.asarray(array, np.float32).astype(NUMPY_TYPES[self.dtype]))

    def weight(self, name: str, shape: list[int], std: float, mean: float = 0.0) -> str:
        values = self.rng.standard_normal(shape, dtype=np.float32)
        values *= np.float32(std)
        values += np.float32(mean)
        return self.tensor(name, values)

    def uniform(self, name: str, shape: list[int], low: float, high: float) -> str:
        return self.tensor(name, self.rng.uniform(low, high, shape).astype(np.float32))

    # Nodes.
    def op(self, op_type: str, inputs: list[str], name: str, outputs: int | list[str] = 1,
           **attrs) -> Any:
        """Adds a node named `name` (scoped, made unique).

        A single output is named like the node; `outputs` as a count gives node_0,
        node_1, ...; as a list of names gives those names, scoped. Returns the output
        name, or the list of them when there are several.
        """
        node_name = self._unique(name)
        if isinstance(outputs, int):
            out_names = [node_name] if outputs == 1 else [f"{node_name}_{i}" for i in range(outputs)]
        else:
            out_names = [self._unique(o) for o in outputs]
        self.nodes.append(helper.make_node(op_type, inputs, out_names, name=node_name, **attrs))
        return out_names[0] if len(out_names) == 1 else out_names

    def cast(self, x: str, dtype: str, name: str) -> str:
        return self.op("Cast", [x], name, to=ELEM_TYPES[dtype])

    def model(self, doc: str, metadata: dict[str, str]) -> onnx.ModelProto:
        """The finished model, shape-inferred (strictly) and checked."""
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs,
                                  self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  ir_version=IR_VERSION, producer_name="vtc-models",
                                  doc_string=doc)
        helper.set_model_props(model, metadata)
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        onnx.checker.check_model(model)
        return model


def save_model(model: onnx.ModelProto, path: str, external_data: bool) -> None:
    """Writes `model`; with external_data its weights go to `<file>.data` beside it."""
    if external_data:
        location = path.rsplit("/", 1)[-1] + ".data"
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=location, size_threshold=1024)
    else:
        onnx.save_model(model, path)


def image_inputs(name: str, batch: int, resolution: int,
                 rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A batch of standard-normal RGB images [B, 3, H, W] named `name`."""
    shape = (batch, 3, resolution, resolution)
    return {name: rng.standard_normal(shape, dtype=np.float32)}


# Layers, written the way PyTorch's exporters produce them.

def linear(b: GraphBuilder, x: str, d_in: int, d_out: int, name: str) -> str:
    """x @ W with W stored [d_in, d_out] (the exporter's pre-transposed weight)."""
    w = b.weight(f"{name}/weight", [d_in, d_out], std=1.0 / math.sqrt(d_in))
    return b.op("MatMul", [x, w], name)


def silu(b: GraphBuilder, x: str, name: str) -> str:
    """x * sigmoid(x), as SiLU is exported at opset 17."""
    return b.op("Mul", [x, b.op("Sigmoid", [x], f"{name}_sigmoid")], name)


def gelu_tanh(b: GraphBuilder, x: str, name: str) -> str:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): GELU's tanh approximation."""
    with b.scope(name):
        cube = b.op("Pow", [x, b.scalar("three", 3.0)], "cube")
        inner = b.op("Add", [x, b.op("Mul", [cube, b.scalar("c", 0.044715)], "cube_scaled")],
                     "inner")
        scaled = b.op("Mul", [inner, b.scalar("sqrt_2_over_pi", math.sqrt(2.0 / math.pi))],
                      "inner_scaled")
        one_plus = b.op("Add", [b.op("Tanh", [scaled], "tanh"), b.scalar("one", 1.0)],
                        "one_plus_tanh")
        half_x = b.op("Mul", [x, b.scalar("half", 0.5)], "half_x")
    return b.op("Mul", [half_x, one_plus], name)


def rms_norm(b: GraphBuilder, x: str, dim: int, name: str, eps: float,
             unit_offset: bool = False) -> str:
    """RMSNorm over the last axis, computed in float32 as the Llama/Gemma model code does.

    Llama: w * (x / rms(x)).to(dtype). Gemma (unit_offset): ((x / rms(x)) * (1 + w)).to(dtype).
    """
    upcast = b.dtype != "f32"
    with b.scope(name):
        w = b.weight("weight", [dim], std=0.1, mean=0.0 if unit_offset else 1.0)
        xf = b.cast(x, "f32", "to_f32") if upcast else x
        square = b.op("Pow", [xf, b.scalar("two", 2.0, "f32")], "square")
        mean = b.op("ReduceMean", [square], "mean_square", axes=[-1], keepdims=1)
        std = b.op("Sqrt", [b.op("Add", [mean, b.scalar("eps", eps, "f32")], "add_eps")], "rms")
        normed = b.op("Mul", [xf, b.op("Reciprocal", [std], "inv_rms")], "normalize")
        if unit_offset:
            wf = b.cast(w, "f32", "weight_to_f32") if upcast else w
            gain = b.op("Add", [wf, b.scalar("one", 1.0, "f32")], "one_plus_weight")
            scaled = b.op("Mul", [normed, gain], "scale")
            return b.cast(scaled, b.dtype, "to_dtype") if upcast else scaled
        normed = b.cast(normed, b.dtype, "to_dtype") if upcast else normed
        return b.op("Mul", [w, normed], "scale")


def conv(b: GraphBuilder, x: str, c_in: int, c_out: int, k: int, name: str, stride: int = 1,
         groups: int = 1, bias: bool = False, std_gain: float = 2.0) -> str:
    """Conv2d with 'same' padding k // 2 and He-style random weights."""
    fan_in = (c_in // groups) * k * k
    w = b.weight(f"{name}/weight", [c_out, c_in // groups, k, k],
                 std=math.sqrt(std_gain / fan_in))
    inputs = [x, w]
    if bias:
        inputs.append(b.weight(f"{name}/bias", [c_out], std=0.05))
    p = k // 2
    return b.op("Conv", inputs, name, kernel_shape=[k, k], strides=[stride, stride],
                pads=[p, p, p, p], group=groups)


def batch_norm(b: GraphBuilder, x: str, channels: int, name: str) -> str:
    """Inference-mode BatchNormalization with random running statistics."""
    with b.scope(name):
        scale = b.weight("weight", [channels], std=0.1, mean=1.0)
        shift = b.weight("bias", [channels], std=0.1)
        mean = b.weight("running_mean", [channels], std=0.1)
        var = b.uniform("running_var", [channels], 0.5, 1.5)
    return b.op("BatchNormalization", [x, scale, shift, mean, var], name, epsilon=1e-5)


def activation(b: GraphBuilder, x: str, kind: str | None, name: str) -> str:
    """Applies 'relu', 'hswish', 'silu' or nothing (None)."""
    if kind is None:
        return x
    if kind == "relu":
        return b.op("Relu", [x], name)
    if kind == "hswish":
        return b.op("HardSwish", [x], name)
    if kind == "silu":
        return silu(b, x, name)
    raise ValueError(f"unknown activation {kind!r} for {name}")
