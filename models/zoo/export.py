"""Exports the model zoo: architectures as users export them from torchvision, timm and
transformers, with random weights, by torch.onnx.export's two exporters.

vtc was tuned on the five workloads of models/; the zoo is what it meets elsewhere. Each entry
builds the library's own module (its classes and builders, never a rewrite) at a configuration
small enough to commit: widths, depths and class counts reduced, every graph pattern of the
architecture kept (its blocks, norms, attention, pooling, resampling, heads). Each model is
exported twice, by the TorchScript exporter (`dynamo=False`, opset 17) and by the dynamo
exporter (`dynamo=True`, opset 18, weights inside the file); an exporter that fails for a
model is recorded in the manifest with its one-line reason and the next goes on. onnxruntime
runs every file written and its outputs are compared with PyTorch's.

Writes DIR/<name>_<exporter>.onnx and DIR/manifest.json (architecture, source package,
exporter, opset, inputs with shapes and dtypes, package versions, file size, nodes).

    python models/zoo/export.py [--out models/zoo] [--only NAME ...] [--exporters ts,dynamo]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import traceback
import warnings

import numpy as np
import onnx
import torch
from torch import nn

warnings.filterwarnings("ignore")

SEED = 0
CLASSES = 10


def image(size: int = 64, channels: int = 3):
    return {"pixels": torch.randn(1, channels, size, size)}


def tokens(length: int = 16, vocab: int = 100, mask: bool = False):
    g = torch.Generator().manual_seed(SEED)
    inputs = {"input_ids": torch.randint(0, vocab, (1, length), generator=g)}
    if mask:
        inputs["attention_mask"] = torch.ones(1, length, dtype=torch.int64)
    return inputs


class FirstOutput(nn.Module):
    """A transformers model returns a ModelOutput; the export takes its first tensor. Inputs
    are passed by name (input_ids, attention_mask, ...: their positions differ by model)."""

    def __init__(self, model: nn.Module, names=("input_ids",)):
        super().__init__()
        self.model = model
        self.names = list(names)

    def forward(self, *args):
        out = self.model(**dict(zip(self.names, args)))
        return out[0]


# torchvision.

def tv_resnet():
    from torchvision.models.resnet import BasicBlock, ResNet

    model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=CLASSES)
    return shrink_resnet(model), image()


def shrink_resnet(model):
    """torchvision's ResNet fixes its widths (64..512); the same blocks at widths 8..64."""
    from torchvision.models.resnet import BasicBlock

    model.inplanes = 8
    model.conv1 = nn.Conv2d(3, 8, kernel_size=7, stride=2, padding=3, bias=False)
    model.bn1 = nn.BatchNorm2d(8)
    model.layer1 = model._make_layer(BasicBlock, 8, 1)
    model.layer2 = model._make_layer(BasicBlock, 16, 1, stride=2)
    model.layer3 = model._make_layer(BasicBlock, 32, 1, stride=2)
    model.layer4 = model._make_layer(BasicBlock, 64, 1, stride=2)
    model.fc = nn.Linear(64, CLASSES)
    return model


def tv_mobilenet_v2():
    from torchvision.models import mobilenet_v2

    return mobilenet_v2(weights=None, width_mult=0.25, num_classes=CLASSES), image()


def tv_mobilenet_v3():
    from torchvision.models import mobilenet_v3_small

    return mobilenet_v3_small(weights=None, width_mult=0.25, num_classes=CLASSES), image()


def tv_efficientnet():
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
    return EfficientNet(setting, 0.2, last_channel=last, num_classes=CLASSES), image()


def tv_shufflenet():
    from torchvision.models.shufflenetv2 import ShuffleNetV2

    return ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 128], num_classes=CLASSES), image()


def tv_squeezenet():
    from torchvision.models import squeezenet1_0

    # 1.0 has the ceil_mode max poolings; its fire modules are fixed at full width.
    return squeezenet1_0(weights=None, num_classes=CLASSES), image()


def tv_regnet():
    from torchvision.models.regnet import BlockParams, RegNet

    params = BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8)
    return RegNet(params, num_classes=CLASSES, stem_width=8), image()


def tv_convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    blocks = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 1)]
    return ConvNeXt(blocks, num_classes=CLASSES), image()


def tv_lraspp():
    """Segmentation: LR-ASPP over a MobileNetV3-Large backbone (bilinear upsampling)."""
    from torchvision.models import mobilenet_v3_large
    from torchvision.models._utils import IntermediateLayerGetter
    from torchvision.models.segmentation.lraspp import LRASPP

    backbone = mobilenet_v3_large(weights=None, width_mult=0.25).features
    stages = [0] + [i for i, b in enumerate(backbone) if getattr(b, "_is_cn", False)]
    stages.append(len(backbone) - 1)
    low, high = stages[-4], stages[-1]
    body = IntermediateLayerGetter(backbone, {str(low): "low", str(high): "high"})
    model = LRASPP(body, backbone[low].out_channels, backbone[high].out_channels, CLASSES, 16)
    return FirstOutputDict(model, "out"), image()


def tv_deeplabv3():
    """Segmentation: DeepLabV3's ASPP head (atrous convolutions, image pooling) on a ResNet."""
    from torchvision.models._utils import IntermediateLayerGetter
    from torchvision.models.resnet import BasicBlock, ResNet
    from torchvision.models.segmentation.deeplabv3 import ASPP, DeepLabV3

    resnet = shrink_resnet(ResNet(BasicBlock, [1, 1, 1, 1], num_classes=CLASSES))
    body = IntermediateLayerGetter(resnet, {"layer4": "out"})
    # DeepLabHead's layers with the ASPP at 32 channels instead of its fixed 256.
    head = nn.Sequential(ASPP(64, [12, 24, 36], 32), nn.Conv2d(32, 32, 3, padding=1, bias=False),
                         nn.BatchNorm2d(32), nn.ReLU(), nn.Conv2d(32, CLASSES, 1))
    return FirstOutputDict(DeepLabV3(body, head), "out"), image()


class FirstOutputDict(nn.Module):
    def __init__(self, model: nn.Module, key: str):
        super().__init__()
        self.model = model
        self.key = key

    def forward(self, x):
        return self.model(x)[self.key]


class RetinaNetHeads(nn.Module):
    """Detection: RetinaNet's classification and box heads over an FPN of a small backbone,
    outputs flattened over anchors as torchvision's RetinaNet does before decoding."""

    def __init__(self):
        super().__init__()
        from torchvision.models.detection.retinanet import RetinaNetHead
        from torchvision.ops import FeaturePyramidNetwork

        def stage(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, 2, 1), nn.BatchNorm2d(cout), nn.ReLU())

        self.stages = nn.ModuleList([stage(3, 8), stage(8, 16), stage(16, 32), stage(32, 64)])
        self.fpn = FeaturePyramidNetwork([16, 32, 64], 16)
        self.head = RetinaNetHead(16, 3, CLASSES)

    def forward(self, x):
        feats = []
        for i, s in enumerate(self.stages):
            x = s(x)
            if i:
                feats.append(x)
        pyramid = self.fpn({str(i): f for i, f in enumerate(feats)})
        out = self.head(list(pyramid.values()))
        return out["cls_logits"], out["bbox_regression"]


def tv_retinanet_head():
    return RetinaNetHeads(), image()


# timm.

def timm_vit():
    from timm.models.vision_transformer import VisionTransformer

    return VisionTransformer(img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2,
                             num_classes=CLASSES), image(32)


def timm_swin():
    from timm.models.swin_transformer import SwinTransformer

    return SwinTransformer(img_size=32, patch_size=2, window_size=4, embed_dim=16, depths=(2, 2),
                           num_heads=(1, 2), num_classes=CLASSES), image(32)


def timm_efficientvit():
    from timm.models.efficientvit_mit import EfficientVit

    return EfficientVit(widths=(8, 16, 24, 32, 48), depths=(1, 1, 1, 1, 1), head_dim=8,
                        head_widths=(64, 80), num_classes=CLASSES), image()


def timm_convnext():
    from timm.models.convnext import ConvNeXt

    return ConvNeXt(depths=(1, 1, 1, 1), dims=(8, 16, 32, 64), num_classes=CLASSES), image()


def timm_mobilevit():
    from timm.models import mobilevit
    from timm.models.byobnet import ByobNet, ByoModelCfg

    cfg = ByoModelCfg(
        blocks=(
            mobilevit._inverted_residual_block(d=1, c=8, s=1, br=2.0),
            mobilevit._inverted_residual_block(d=1, c=12, s=2, br=2.0),
            mobilevit._mobilevit_block(d=1, c=16, s=2, transformer_dim=24, transformer_depth=1,
                                       patch_size=2, br=2.0),
            mobilevit._mobilevit_block(d=1, c=24, s=2, transformer_dim=32, transformer_depth=1,
                                       patch_size=2, br=2.0),
        ),
        stem_chs=8, stem_type="3x3", stem_pool="", downsample="", act_layer="silu",
        num_features=64,
    )
    return ByobNet(cfg, num_classes=CLASSES), image()


# transformers.

MASKED = ("input_ids", "attention_mask")

def hf_bert():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    return FirstOutput(BertModel(cfg), MASKED), tokens(mask=True)


def hf_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64,
                     use_cache=False)
    return FirstOutput(GPT2LMHeadModel(cfg), MASKED), tokens(mask=True)


def hf_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                      use_cache=False)
    return FirstOutput(LlamaForCausalLM(cfg), MASKED), tokens(mask=True)


def hf_t5_encoder():
    from transformers import T5Config, T5EncoderModel

    cfg = T5Config(vocab_size=100, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2,
                   use_cache=False)
    return FirstOutput(T5EncoderModel(cfg)), tokens()


def hf_whisper_encoder():
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    cfg = WhisperConfig(num_mel_bins=16, d_model=32, encoder_layers=2, encoder_attention_heads=2,
                        encoder_ffn_dim=64, max_source_positions=32)
    return FirstOutput(WhisperEncoder(cfg), ["input_features"]), {"input_features": torch.randn(1, 16, 64)}


def hf_vit():
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, image_size=32, patch_size=8)
    return FirstOutput(ViTModel(cfg), ["pixel_values"]), image(32)


ZOO = {
    "resnet": ("torchvision", tv_resnet),
    "mobilenet_v2": ("torchvision", tv_mobilenet_v2),
    "mobilenet_v3": ("torchvision", tv_mobilenet_v3),
    "efficientnet": ("torchvision", tv_efficientnet),
    "shufflenet_v2": ("torchvision", tv_shufflenet),
    "squeezenet": ("torchvision", tv_squeezenet),
    "regnet": ("torchvision", tv_regnet),
    "convnext": ("torchvision", tv_convnext),
    "lraspp": ("torchvision", tv_lraspp),
    "deeplabv3": ("torchvision", tv_deeplabv3),
    "retinanet_head": ("torchvision", tv_retinanet_head),
    "timm_vit": ("timm", timm_vit),
    "timm_swin": ("timm", timm_swin),
    "timm_efficientvit": ("timm", timm_efficientvit),
    "timm_convnext": ("timm", timm_convnext),
    "timm_mobilevit": ("timm", timm_mobilevit),
    "bert": ("transformers", hf_bert),
    "gpt2": ("transformers", hf_gpt2),
    "llama": ("transformers", hf_llama),
    "t5_encoder": ("transformers", hf_t5_encoder),
    "whisper_encoder": ("transformers", hf_whisper_encoder),
    "hf_vit": ("transformers", hf_vit),
}

EXPORTERS = {"ts": (False, 17), "dynamo": (True, 18)}


def versions():
    import importlib.metadata as md

    names = ["torch", "torchvision", "timm", "transformers", "onnx", "onnxscript", "onnxruntime"]
    return {n: md.version(n) for n in names}


def export(model, inputs: dict, path: str, dynamo: bool, opset: int):
    args = tuple(inputs.values())
    kwargs = dict(input_names=list(inputs), opset_version=opset, dynamo=dynamo)
    if dynamo:
        kwargs.update(external_data=False, verbose=False)
    else:
        kwargs.update(do_constant_folding=True)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        torch.onnx.export(model, args, path, **kwargs)


def check_with_onnxruntime(path: str, model, inputs: dict) -> float:
    """The largest relative L2 error of onnxruntime's outputs against PyTorch's."""
    import onnxruntime as ort

    with torch.no_grad():
        expected = model(*inputs.values())
    expected = expected if isinstance(expected, tuple) else (expected,)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {i.name: v.numpy() for i, v in zip(sess.get_inputs(), inputs.values())}
    worst = 0.0
    for got, want in zip(sess.run(None, feeds), expected):
        want = want.numpy().astype(np.float64)
        err = np.linalg.norm(got.astype(np.float64) - want) / max(np.linalg.norm(want), 1e-30)
        worst = max(worst, float(err))
    return worst


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=here)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--exporters", default="ts,dynamo")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {"versions": versions(), "models": []}
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest["models"] = json.load(f)["models"]
    failures = 0
    for name, (package, build) in ZOO.items():
        if args.only and name not in args.only:
            continue
        for exporter in args.exporters.split(","):
            dynamo, opset = EXPORTERS[exporter]
            torch.manual_seed(SEED)
            try:
                model, inputs = build()
            except Exception as e:
                print(f"{name}: cannot build: {e}", flush=True)
                failures += 1
                break
            model.eval()
            file = f"{name}_{exporter}.onnx"
            path = os.path.join(args.out, file)
            entry = {"name": f"{name}_{exporter}", "architecture": name, "package": package,
                     "exporter": "dynamo" if dynamo else "torchscript", "opset": opset,
                     "file": file,
                     "inputs": [{"name": k, "shape": list(v.shape),
                                 "dtype": str(v.dtype).replace("torch.", "")}
                                for k, v in inputs.items()]}
            manifest["models"] = [m for m in manifest["models"] if m["name"] != entry["name"]]
            try:
                with torch.no_grad():
                    export(model, inputs, path, dynamo, opset)
                proto = onnx.load(path)
                entry["nodes"] = len(proto.graph.node)
                entry["bytes"] = os.path.getsize(path)
                entry["ort_rel_l2_vs_torch"] = check_with_onnxruntime(path, model, inputs)
                print(f"{entry['name']:<28} {entry['nodes']:>5} nodes {entry['bytes'] / 1e6:6.2f} MB"
                      f"  ort vs torch {entry['ort_rel_l2_vs_torch']:.2g}", flush=True)
            except Exception as e:  # an exporter that cannot take a model: recorded, not fatal
                failures += 1
                reason = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
                entry["failed"] = reason
                if os.path.exists(path):
                    os.remove(path)
                print(f"{entry['name']:<28} FAILED: {reason}", flush=True)
                if os.environ.get("ZOO_TRACEBACK"):
                    traceback.print_exc()
            manifest["models"].append(entry)
    manifest["models"].sort(key=lambda m: m["name"])
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"export: {len(manifest['models'])} entries, {failures} failed exports this run")


if __name__ == "__main__":
    sys.exit(main())
