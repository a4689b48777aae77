"""Writes torchvision networks exported to StableHLO by torch-mlir (test_networks.py folds them).

    python3 test/testdata/torchvision/generate.py        # needs torch, torchvision, torch-mlir

Each network is torchvision's own class in a small configuration (the real blocks, fewer
and narrower: the files stay small enough to check in), put in eval mode with seeded
parameters and batch-norm statistics, and exported with
`torch_mlir.fx.export_and_import(model, x, output_type="stablehlo")` exactly as a user
would; the module is written as torch-mlir prints it (weights as `dense_resource` blobs).
The `_dyn` files are the same export with a symbolic batch (`torch.export.Dim`).

Parameters follow test/python/networks.py: kernels with variance 1 / fan-in, batch-norm
means N(0, 0.2^2), variances U(0.5, 1.5), scales U(0.5, 1.5) with a random sign, shifts and
biases N(0, 0.2^2). Every value is rounded to bfloat16's precision (and stored as float32):
the blobs then compress well in git, and nothing about folding depends on the low bits.

Written with torch 2.14.1, torchvision 0.29.1 and torch-mlir 20261001 (CPU).
"""

from __future__ import annotations

import pathlib

import numpy as np
import torch
from torch_mlir import fx
from torchvision.models import densenet, efficientnet, mobilenetv3, regnet

HERE = pathlib.Path(__file__).resolve().parent
INPUT = (3, 64, 64)


def networks() -> dict[str, torch.nn.Module]:
    """The networks, by file name: a pre-activation DenseNet (BN -> ReLU -> conv) and three
    squeeze-excite networks (the gate must never be folded into a kernel)."""
    effnet, effnet_last = efficientnet._efficientnet_conf(
        "efficientnet_b0", width_mult=0.25, depth_mult=0.25
    )
    mbv3, mbv3_last = mobilenetv3._mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25)
    regnet_params = regnet.BlockParams.from_init_params(
        depth=6, w_0=8, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25
    )
    return {
        "densenet": densenet.DenseNet(
            growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16, bn_size=2, num_classes=10
        ),
        "efficientnet": efficientnet.EfficientNet(effnet, 0.2, last_channel=effnet_last, num_classes=10),
        "mobilenet_v3": mobilenetv3.MobileNetV3(mbv3, mbv3_last, num_classes=10),
        "regnet_y": regnet.RegNet(regnet_params, num_classes=10),
    }


DYNAMIC = ("densenet", "regnet_y")
"""Also written with a symbolic batch."""


def _bf16_precision(values: np.ndarray) -> np.ndarray:
    """`values` (float32) with the low 16 bits of each cleared: bfloat16's precision."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def set_parameters(model: torch.nn.Module, seed: int) -> None:
    """Give every parameter and batch-norm statistic of `model` its seeded value."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                c = module.num_features
                stats = {
                    "running_mean": rng.normal(0.0, 0.2, c),
                    "running_var": rng.uniform(0.5, 1.5, c),
                    "weight": rng.uniform(0.5, 1.5, c) * rng.choice([-1.0, 1.0], c),
                    "bias": rng.normal(0.0, 0.2, c),
                }
                for name, value in stats.items():
                    getattr(module, name).copy_(torch.from_numpy(_bf16_precision(value)))
            elif isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
                weight = module.weight
                fan_in = weight[0].numel()
                value = rng.normal(0.0, fan_in**-0.5, tuple(weight.shape))
                weight.copy_(torch.from_numpy(_bf16_precision(value)))
                if module.bias is not None:
                    bias = rng.normal(0.0, 0.2, tuple(module.bias.shape))
                    module.bias.copy_(torch.from_numpy(_bf16_precision(bias)))


def export(model: torch.nn.Module, dynamic: bool) -> str:
    """`model` exported by torch-mlir to StableHLO text, with a static batch of 1 or a
    symbolic batch."""
    if not dynamic:
        return str(fx.export_and_import(model, torch.zeros(1, *INPUT), output_type="stablehlo"))
    batch = torch.export.Dim("batch", min=1, max=64)
    module = fx.export_and_import(
        model, torch.zeros(2, *INPUT), output_type="stablehlo", dynamic_shapes={"x": {0: batch}}
    )
    return str(module)


def main() -> None:
    for seed, (name, model) in enumerate(networks().items()):
        model.eval()
        set_parameters(model, seed)
        (HERE / f"{name}.mlir").write_text(export(model, dynamic=False))
        if name in DYNAMIC:
            (HERE / f"{name}_dyn.mlir").write_text(export(model, dynamic=True))


if __name__ == "__main__":
    main()
