"""Prints what a model file holds: node count, data-movement op counts, inputs and outputs.

The data-movement ops counted are the ones vtc turns into virtual tensors (Reshape,
Transpose, Split, Concat, Slice, Expand, Unsqueeze, Squeeze, ScatterND, Gather, Flatten)
plus Pad, Resize and GatherND, which some workloads and exporters also produce.

    python3 models/describe.py MODEL.onnx [MODEL.onnx ...]
"""

from __future__ import annotations

import collections
import sys

import onnx

DATA_MOVEMENT = ("Reshape", "Transpose", "Split", "Concat", "Slice", "Expand", "Unsqueeze",
                 "Squeeze", "ScatterND", "Gather", "Flatten", "Pad", "Resize", "GatherND")


def value_signature(info: onnx.ValueInfoProto) -> str:
    tensor = info.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in tensor.shape.dim]
    return f"{info.name}:{onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type).name}{dims}"


def describe(path: str) -> str:
    graph = onnx.load(path, load_external_data=False).graph
    ops = collections.Counter(node.op_type for node in graph.node)
    movement = " ".join(f"{op}={ops[op]}" for op in DATA_MOVEMENT if ops[op])
    inputs = ", ".join(value_signature(i) for i in graph.input)
    outputs = ", ".join(value_signature(o) for o in graph.output)
    return (f"{path}\n  nodes {len(graph.node)}; data movement: {movement or 'none'}\n"
            f"  inputs: {inputs}\n  outputs: {outputs}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for model_path in sys.argv[1:]:
        print(describe(model_path))
