"""Exports a tiny transformer block from PyTorch with symbolic `batch` and `seq` axes, the
test data of vtc's symbolic dimensions (Options::dims, --dim) on a model as an exporter
writes it: the shapes reach Reshape through Shape -> Gather -> Concat, which vtc folds once
the sizes are bound.

The block is pre-norm attention (LayerNorm, one QKV projection split into heads, softmax
attention, output projection, residual) and a GELU MLP, width 32, 4 heads, seeded weights.
Each exporter that works writes one file (TorchScript at opset 17, dynamo at 18; IR version 8
where the checker allows):
    tiny_block_dynamic_torchscript.onnx   torch.onnx.export(dynamo=False, dynamic_axes=...)
    tiny_block_dynamic_dynamo.onnx        torch.onnx.export(dynamo=True, dynamic_shapes=...)
and onnxruntime checks both against PyTorch at two shapes. The files in models/testdata/
were written this way; testdata/README.md records the torch version.

    python3 models/export_dynamic.py --out models/testdata
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from export_torch import finish_model
from graph_builder import OPSET


class TinyBlock(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4, hidden: int = 64):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(dim, dim=-1)
        q, k, v = (t.reshape(batch, seq, self.heads, dim // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) * (dim // self.heads) ** -0.5
        attended = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(batch, seq, dim)
        x = x + self.proj(attended)
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def export(module: nn.Module, example: torch.Tensor, path: str, exporter: str) -> None:
    common = dict(input_names=["x"], output_names=["y"])
    if exporter == "torchscript":
        axes = {0: "batch", 1: "seq"}
        torch.onnx.export(module, (example,), path, dynamo=False, opset_version=OPSET,
                          dynamic_axes={"x": axes, "y": axes}, **common)
    else:  # at its own opset (18): converting down to 17 leaves Split's num_outputs behind
        dims = {0: torch.export.Dim("batch"), 1: torch.export.Dim("seq")}
        torch.onnx.export(module, (example,), path, dynamo=True, external_data=False,
                          opset_version=18, dynamic_shapes={"x": dims}, **common)
    finish_model(path, external_data=False)


def symbolic_axes(path: str) -> list[list]:
    import onnx

    model = onnx.load(path)
    return [[d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in list(model.graph.input) + list(model.graph.output)]


def check(module: nn.Module, path: str) -> str:
    import onnxruntime as ort

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    errors = []
    for shape in [(1, 4, 32), (3, 7, 32)]:
        x = torch.from_numpy(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
        want = module(x).detach().numpy()
        got = session.run(None, {"x": x.numpy()})[0]
        errors.append(f"{shape}: {np.linalg.norm(got - want) / np.linalg.norm(want):.1e}")
    return "ort vs torch rel_l2 " + ", ".join(errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    module = TinyBlock().eval()
    example = torch.randn(2, 5, 32)
    print(f"torch {torch.__version__}")
    with torch.no_grad():
        for exporter in ("torchscript", "dynamo"):
            path = os.path.join(args.out, f"tiny_block_dynamic_{exporter}.onnx")
            try:
                export(module, example, path, exporter)
            except Exception as error:  # one exporter failing leaves the other
                print(f"{exporter}: failed ({type(error).__name__}: {error})")
                continue
            print(f"{exporter}: {path} {os.path.getsize(path)} bytes, axes {symbolic_axes(path)}, "
                  f"{check(module, path)}")


if __name__ == "__main__":
    main()
