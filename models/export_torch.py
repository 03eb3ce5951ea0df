"""Exports the benchmark workloads from PyTorch modules with torch.onnx.export.

For a machine with PyTorch, torchvision and timm and no network. The language-model layers
are plain PyTorch written like Hugging Face model code (merged QKV split into views for
Llama, separate projections for Gemma-2, out-of-place index_copy at `pos` for the KV cache as
in HF's StaticCache, expand + reshape for grouped-query attention, softmax in float32);
EfficientViT is timm's `efficientvit_b1` (pretrained=False) and its features; ShuffleNet V2
is torchvision's (weights=None); the YOLO11 C3k2 block and YOLO11n backbone + neck are
Ultralytics' modules rewritten here with batch norms fused into the convolutions. The
configurations, input names and seeded inputs are the ONNX generators' (workloads.py).

Each model is exported at opset 17 with the TorchScript exporter (dynamo=False), falling
back to dynamo=True when that fails; full sizes are saved with external data. A failure is
printed and the next model goes on. With --check (default for small sizes) onnxruntime runs
each exported f32/f16 model and its outputs are compared with PyTorch's.

    python3 models/export_torch.py --out DIR [--size small|full|all] [--dtype f32,f16,bf16]
                                   [--batch 1,16] [--only NAME ...] [--no-check]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import traceback
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from torch import nn

import decoder_parts
import shufflenet_v2
from graph_builder import IR_VERSION, OPSET, save_model
from workloads import WORKLOADS, model_name

TORCH_TYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

# The TorchScript exporter is asked for on purpose; its deprecation notice is noise here.
warnings.filterwarnings("ignore", message="You are using the legacy TorchScript")
warnings.filterwarnings("ignore", message="Constant folding - Only steps=1")


# Llama-3 and Gemma-2 decoder layers at one decode step.

class RMSNorm(nn.Module):
    """Llama: w * norm(x).to(dtype); Gemma (unit_offset): (norm(x) * (1 + w)).to(dtype)."""

    def __init__(self, dim: int, eps: float, unit_offset: bool = False):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim) if unit_offset else torch.ones(dim))
        self.eps = eps
        self.unit_offset = unit_offset

    def forward(self, x):
        xf = x.float()
        normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        if self.unit_offset:
            return (normed * (1.0 + self.weight.float())).type_as(x)
        return self.weight * normed.to(x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class DecodeAttention(nn.Module):
    """Grouped-query attention of one token against a static KV cache updated at `pos`."""

    def __init__(self, cfg, merged_qkv: bool, softcap: float | None, window: int | None):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = cfg.heads, cfg.kv_heads, cfg.head_dim
        self.cache_len, self.softcap, self.window = cfg.cache_len, softcap, window
        q_dim, kv_dim = cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim
        self.split_sizes = [q_dim, kv_dim, kv_dim]
        if merged_qkv:
            self.qkv_proj = nn.Linear(cfg.hidden, q_dim + 2 * kv_dim, bias=False)
        else:
            self.q_proj = nn.Linear(cfg.hidden, q_dim, bias=False)
            self.k_proj = nn.Linear(cfg.hidden, kv_dim, bias=False)
            self.v_proj = nn.Linear(cfg.hidden, kv_dim, bias=False)
        self.o_proj = nn.Linear(q_dim, cfg.hidden, bias=False)
        cos, sin = decoder_parts.rope_tables(cfg.cache_len, cfg.head_dim, cfg.rope_theta)
        self.register_buffer("cos_table", torch.from_numpy(cos))
        self.register_buffer("sin_table", torch.from_numpy(sin))
        self.register_buffer("key_positions", torch.arange(cfg.cache_len))
        self.merged_qkv = merged_qkv
        # The KV cache updated in place (index_copy_, as HF's StaticCache does) instead of a
        # new cache: what a framework's decode step runs. The ONNX export keeps the
        # out-of-place form (ONNX has no in-place update); bench/gpu times the in-place one.
        self.in_place_cache = False

    def forward(self, x, past_k, past_v, pos, mask):
        b = x.shape[0]
        if self.merged_qkv:
            q, k, v = self.qkv_proj(x).split(self.split_sizes, dim=-1)
        else:
            q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        q = q.view(b, 1, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, 1, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, 1, self.kv_heads, self.head_dim).transpose(1, 2)
        cos = self.cos_table[pos].to(x.dtype)[None, None]
        sin = self.sin_table[pos].to(x.dtype)[None, None]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin

        if self.in_place_cache:
            present_k = past_k.index_copy_(2, pos, k)
            present_v = past_v.index_copy_(2, pos, v)
        else:
            present_k = past_k.index_copy(2, pos, k)
            present_v = past_v.index_copy(2, pos, v)
        groups = self.heads // self.kv_heads
        shape = (b, self.kv_heads, groups, self.cache_len, self.head_dim)
        keys = present_k[:, :, : self.cache_len][:, :, None].expand(shape)
        keys = keys.reshape(b, self.heads, self.cache_len, self.head_dim)
        values = present_v[:, :, : self.cache_len][:, :, None].expand(shape)
        values = values.reshape(b, self.heads, self.cache_len, self.head_dim)

        scores = torch.matmul(q, keys.transpose(2, 3)) * (self.head_dim ** -0.5)
        if self.softcap is not None:
            scores = torch.tanh(scores / self.softcap) * self.softcap
        if self.window is not None:
            inside = self.key_positions > pos - self.window
            mask = mask.masked_fill(~inside, decoder_parts.MASK_VALUE)
        probs = F.softmax(scores + mask, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(probs, values).transpose(1, 2).reshape(b, 1, -1)
        return self.o_proj(out), present_k, present_v


class GatedMLP(nn.Module):
    """down(act(gate(x)) * up(x)) with SiLU (Llama) or tanh-GELU (Gemma-2)."""

    def __init__(self, hidden: int, ffn: int, gelu: bool):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)
        self.gelu = gelu

    def forward(self, x):
        gate = self.gate_proj(x)
        act = F.gelu(gate, approximate="tanh") if self.gelu else F.silu(gate)
        return self.down_proj(act * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_norm = RMSNorm(cfg.hidden, cfg.eps)
        self.attn = DecodeAttention(cfg, merged_qkv=True, softcap=None, window=None)
        self.post_attention_norm = RMSNorm(cfg.hidden, cfg.eps)
        self.mlp = GatedMLP(cfg.hidden, cfg.ffn, gelu=False)

    def forward(self, x, past_k, past_v, pos, mask):
        attn, present_k, present_v = self.attn(self.input_norm(x), past_k, past_v, pos, mask)
        h = x + attn
        return h + self.mlp(self.post_attention_norm(h)), present_k, present_v


class Gemma2DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_norm = RMSNorm(cfg.hidden, cfg.eps, unit_offset=True)
        self.attn = DecodeAttention(cfg, merged_qkv=False, softcap=cfg.softcap,
                                    window=cfg.window if cfg.local else None)
        self.post_attention_norm = RMSNorm(cfg.hidden, cfg.eps, unit_offset=True)
        self.pre_feedforward_norm = RMSNorm(cfg.hidden, cfg.eps, unit_offset=True)
        self.mlp = GatedMLP(cfg.hidden, cfg.ffn, gelu=True)
        self.post_feedforward_norm = RMSNorm(cfg.hidden, cfg.eps, unit_offset=True)

    def forward(self, x, past_k, past_v, pos, mask):
        attn, present_k, present_v = self.attn(self.input_norm(x), past_k, past_v, pos, mask)
        h = x + self.post_attention_norm(attn)
        mlp = self.post_feedforward_norm(self.mlp(self.pre_feedforward_norm(h)))
        return h + mlp, present_k, present_v


# YOLO11 (Ultralytics modules, batch norms fused into the convolutions).

class Conv(nn.Module):
    def __init__(self, c_in, c_out, k=1, s=1, g=1, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, s, k // 2, groups=g, bias=True)
        self.act = nn.SiLU() if act else nn.Identity()

    def forward(self, x):
        return self.act(self.conv(x))


class Bottleneck(nn.Module):
    def __init__(self, c, k=(3, 3), e=0.5):
        super().__init__()
        hidden = int(c * e)
        self.cv1 = Conv(c, hidden, k[0])
        self.cv2 = Conv(hidden, c, k[1])

    def forward(self, x):
        return x + self.cv2(self.cv1(x))


class C3k(nn.Module):
    def __init__(self, c, n=2):
        super().__init__()
        hidden = c // 2
        self.cv1 = Conv(c, hidden)
        self.cv2 = Conv(c, hidden)
        self.cv3 = Conv(2 * hidden, c)
        self.m = nn.Sequential(*(Bottleneck(hidden, (3, 3), 1.0) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class C3k2(nn.Module):
    def __init__(self, c_in, c_out, n=1, c3k=False, e=0.5):
        super().__init__()
        self.c = int(c_out * e)
        self.cv1 = Conv(c_in, 2 * self.c)
        self.cv2 = Conv((2 + n) * self.c, c_out)
        self.m = nn.ModuleList(C3k(self.c) if c3k else Bottleneck(self.c) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, c_in, c_out, k=5):
        super().__init__()
        hidden = c_in // 2
        self.cv1 = Conv(c_in, hidden)
        self.cv2 = Conv(hidden * 4, c_out)
        self.m = nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        y = [self.cv1(x)]
        y.extend(self.m(y[-1]) for _ in range(3))
        return self.cv2(torch.cat(y, 1))


class PSAAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.key_dim = self.head_dim // 2
        self.scale = self.key_dim ** -0.5
        self.qkv = Conv(dim, dim + 2 * self.key_dim * num_heads, 1, act=False)
        self.proj = Conv(dim, dim, 1, act=False)
        self.pe = Conv(dim, dim, 3, 1, g=dim, act=False)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(x).view(b, self.num_heads, self.key_dim * 2 + self.head_dim,
                                   h * w).split([self.key_dim, self.key_dim, self.head_dim], 2)
        attn = ((q.transpose(-2, -1) @ k) * self.scale).softmax(dim=-1)
        x = (v @ attn.transpose(-2, -1)).view(b, c, h, w) + self.pe(v.reshape(b, c, h, w))
        return self.proj(x)


class C2PSA(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c // 2
        self.cv1 = Conv(c, 2 * self.c)
        self.cv2 = Conv(2 * self.c, c)
        self.attn = PSAAttention(self.c, self.c // 64)
        self.ffn = nn.Sequential(Conv(self.c, 2 * self.c), Conv(2 * self.c, self.c, act=False))

    def forward(self, x):
        a, b = self.cv1(x).split((self.c, self.c), dim=1)
        b = b + self.attn(b)
        b = b + self.ffn(b)
        return self.cv2(torch.cat((a, b), 1))


class Yolo11BackboneNeck(nn.Module):
    """yolo11.yaml layers 0-22 at the configured width/depth; returns P3, P4, P5."""

    def __init__(self, cfg):
        super().__init__()

        def ch(c):
            return int(math.ceil(min(c, cfg.max_channels) * cfg.width / 8) * 8)

        n = max(round(2 * cfg.depth), 1)
        self.backbone = nn.ModuleList([
            Conv(3, ch(64), 3, 2), Conv(ch(64), ch(128), 3, 2),
            C3k2(ch(128), ch(256), n, False, 0.25), Conv(ch(256), ch(256), 3, 2),
            C3k2(ch(256), ch(512), n, False, 0.25), Conv(ch(512), ch(512), 3, 2),
            C3k2(ch(512), ch(512), n, True), Conv(ch(512), ch(1024), 3, 2),
            C3k2(ch(1024), ch(1024), n, True), SPPF(ch(1024), ch(1024)), C2PSA(ch(1024)),
        ])
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.l13 = C3k2(ch(1024) + ch(512), ch(512), n, False)
        self.l16 = C3k2(ch(512) + ch(512), ch(256), n, False)
        self.l17 = Conv(ch(256), ch(256), 3, 2)
        self.l19 = C3k2(ch(256) + ch(512), ch(512), n, False)
        self.l20 = Conv(ch(512), ch(512), 3, 2)
        self.l22 = C3k2(ch(512) + ch(1024), ch(1024), n, True)

    def forward(self, x):
        saved = {}
        for i, layer in enumerate(self.backbone):
            x = layer(x)
            saved[i] = x
        h4 = self.l13(torch.cat((self.up(saved[10]), saved[6]), 1))
        p3 = self.l16(torch.cat((self.up(h4), saved[4]), 1))
        p4 = self.l19(torch.cat((self.l17(p3), h4), 1))
        p5 = self.l22(torch.cat((self.l20(p4), saved[10]), 1))
        return p3, p4, p5


def c3k2_block(cfg) -> nn.Module:
    return C3k2(cfg.channels, cfg.channels, cfg.repeats, cfg.c3k, cfg.expand)


# Vision models from timm and torchvision.

class TimmEfficientViTFeatures(nn.Module):
    """timm's efficientvit_b1 (or the small widths) up to its last stage's features."""

    def __init__(self, cfg):
        super().__init__()
        import timm

        self.model = timm.create_model("efficientvit_b1", pretrained=False,
                                       widths=cfg.widths, depths=cfg.depths, head_dim=cfg.dim)

    def forward(self, x):
        return self.model.forward_features(x)


def he_initialized(module: nn.Module) -> nn.Module:
    """Kaiming-normal convolutions and random batch-norm statistics.

    With torchvision's default initialisation ShuffleNet's activations vanish with depth and
    the logits are just the classifier's bias, which would make the output check vacuous.
    """
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.normal_(1.0, 0.1)
                m.bias.normal_(0.0, 0.1)
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return module


def torchvision_shufflenet(cfg) -> nn.Module:
    import torchvision

    if cfg == shufflenet_v2.CONFIGS["full"]:
        return he_initialized(torchvision.models.shufflenet_v2_x1_0(weights=None))
    return he_initialized(torchvision.models.ShuffleNetV2(
        list(cfg.stage_repeats), list(cfg.channels), num_classes=cfg.classes))


# Workload name -> (module factory, output names in the generators' order of returns).
MODULES = {
    "llama3_layer": (LlamaDecoderLayer, ["y", "present_k", "present_v"]),
    "gemma2_local": (Gemma2DecoderLayer, ["y", "present_k", "present_v"]),
    "gemma2_global": (Gemma2DecoderLayer, ["y", "present_k", "present_v"]),
    "efficientvit": (TimmEfficientViTFeatures, ["features"]),
    "yolo11_c3k2": (c3k2_block, ["y"]),
    "yolo11n": (Yolo11BackboneNeck, ["p3", "p4", "p5"]),
    "shufflenet_v2": (torchvision_shufflenet, ["logits"]),
}


def torch_inputs(name: str, size: str, dtype: str, batch: int,
                 device: torch.device) -> dict[str, torch.Tensor]:
    """The generators' seeded inputs (seed 0), as tensors of the model's type."""
    workload = WORKLOADS[name]
    values = workload.make_inputs(workload.configs[size], batch, np.random.default_rng(0))
    return {k: torch.from_numpy(v).to(device=device,
                                      dtype=TORCH_TYPES[dtype] if v.dtype == np.float32 else None)
            for k, v in values.items()}


def run_exporter(module: nn.Module, inputs: dict[str, torch.Tensor], outputs: list[str],
                 path: str) -> str:
    """torch.onnx.export at opset 17, TorchScript first, then dynamo; returns which worked."""
    common = dict(input_names=list(inputs), output_names=outputs, opset_version=OPSET)
    try:
        torch.onnx.export(module, tuple(inputs.values()), path, dynamo=False, **common)
        return "torchscript"
    except Exception as error:
        print(f"    torchscript exporter failed ({type(error).__name__}: "
              f"{str(error).splitlines()[0] if str(error) else ''}); trying dynamo", flush=True)
    torch.onnx.export(module, tuple(inputs.values()), path, dynamo=True, external_data=True,
                      **common)
    return "dynamo"


def finish_model(path: str, external_data: bool) -> str:
    """Lowers the IR version to 8 where the checker allows; rewrites the file. Returns a note."""
    model = onnx.load(path)
    opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    exported_ir = model.ir_version
    if exported_ir > IR_VERSION:
        model.ir_version = IR_VERSION
        try:
            onnx.checker.check_model(model)
        except onnx.checker.ValidationError:
            model.ir_version = exported_ir
    for leftover in (path, path + ".data"):
        if os.path.exists(leftover):
            os.remove(leftover)
    save_model(model, path, external_data)
    return f"ir {model.ir_version} opsets {opsets}"


def check_with_ort(path: str, inputs: dict[str, torch.Tensor],
                   expected: tuple[torch.Tensor, ...], outputs: list[str]) -> str:
    """Relative L2 error of onnxruntime's outputs against PyTorch's, per output."""
    import onnxruntime as ort

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {k: v.cpu().numpy() for k, v in inputs.items()}
    got = dict(zip(outputs, session.run(outputs, feed)))
    errors = []
    for name, want in zip(outputs, expected):
        want = want.float().cpu().numpy().astype(np.float64)
        diff = np.linalg.norm(got[name].astype(np.float64) - want)
        rms = float(np.sqrt(np.mean(np.square(want))))
        errors.append(f"{name} {diff / max(np.linalg.norm(want), 1e-30):.1e} (rms {rms:.2g})")
    return "ort vs torch rel_l2: " + ", ".join(errors)


def export_one(out_dir: str, name: str, size: str, dtype: str, batch: int,
               device: torch.device, check: bool) -> bool:
    factory, outputs = MODULES[name]
    path = os.path.join(out_dir, model_name(name, size, dtype, batch) + ".onnx")
    start = time.perf_counter()
    try:
        torch.manual_seed(0)
        module = factory(WORKLOADS[name].configs[size]).eval()
        module = module.to(device=device, dtype=TORCH_TYPES[dtype])
        inputs = torch_inputs(name, size, dtype, batch, device)
        with torch.no_grad():
            expected = module(*inputs.values())
            expected = expected if isinstance(expected, tuple) else (expected,)
            exporter = run_exporter(module, inputs, outputs, path)
        note = finish_model(path, external_data=size == "full")
        nodes = len(onnx.load(path, load_external_data=False).graph.node)
        line = (f"{os.path.basename(path):40s} {exporter:11s} {nodes:5d} nodes {note} "
                f"{time.perf_counter() - start:6.1f} s")
        if check and dtype != "bf16":
            line += "  " + check_with_ort(path, inputs, expected, outputs)
        print(line, flush=True)
        return True
    except Exception:
        print(f"{os.path.basename(path):40s} FAILED", flush=True)
        traceback.print_exc()
        return False


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--size", choices=["small", "full", "all"], default="small")
    parser.add_argument("--dtype", default="f32,f16,bf16")
    parser.add_argument("--batch", default="1,16")
    parser.add_argument("--only", nargs="+", choices=sorted(MODULES), metavar="NAME")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the onnxruntime comparison (it runs on small sizes only)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    # Full f32 arithmetic, so the f32 comparison with onnxruntime is meaningful.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sizes = ["small", "full"] if args.size == "all" else [args.size]
    failures = 0
    for name in MODULES:
        if args.only and name not in args.only:
            continue
        for size in sizes:
            for dtype in args.dtype.split(","):
                if dtype not in WORKLOADS[name].dtypes:
                    continue
                for batch in (int(b) for b in args.batch.split(",")):
                    check = not args.no_check and size == "small"
                    failures += not export_one(args.out, name, size, dtype, batch, device, check)
    print(f"export done: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
