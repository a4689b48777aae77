"""The benchmark networks: one definition, seeded weights, a StableHLO export and an nn.Module.

Each network is written once, as a function of a small set of layer calls (`conv_bn`,
`dense`, `add`, pools). Three back ends run that function:

- `_Collect` records every layer's shape, in order, so that `make_weights` can draw the
  weights from a seed (no downloads);
- `_JaxOps` computes with `jax.lax` in NHWC / HWIO, the layout JAX and Flax emit, and writes
  each batch norm as `stablehlo.batch_norm_inference` through a one-op JAX primitive (JAX
  itself never emits that op: it lowers `flax.linen.BatchNorm` to elementwise arithmetic);
- `_TorchNet` builds the equivalent `torch.nn.Module` (NCHW / OIHW, `nn.Conv2d` followed by
  `nn.BatchNorm2d` in eval mode), used by the PyTorch and ONNX peers.

The weights are the same numbers in both: torch's OIHW kernels are transposed to HWIO for
JAX. `export_stablehlo` makes a real `jax.export.Exported` whose weights are either dense
constants in the module or arguments of `main`.

>>> spec = NETWORKS["resnet18"]
>>> weights = make_weights(spec, seed=0)
>>> exported = export_stablehlo(spec, weights, weights_as="constants")   # doctest: +SKIP
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

__all__ = [
    "NETWORKS",
    "Layer",
    "Network",
    "export_stablehlo",
    "layers_of",
    "make_weights",
    "torch_module",
    "weight_bytes",
]

EPSILON = 1e-5
"""nn.BatchNorm2d's default epsilon."""


@dataclass(frozen=True)
class Layer:
    """One layer with weights: `conv_bn` (a convolution and its batch norm) or `dense`."""

    name: str
    kind: str
    cin: int
    cout: int
    kernel: int = 1
    stride: int = 1
    groups: int = 1
    last_in_block: bool = False


@dataclass(frozen=True)
class Network:
    """A named architecture: `build(ops, x)` written against the layer calls below."""

    name: str
    title: str
    build: Callable
    image: int = 224
    classes: int = 1000


# --- the architectures --------------------------------------------------------------------


def _resnet(ops, x, *, blocks: tuple[int, ...], bottleneck: bool, width: int = 1):
    """torchvision's ResNet (v1.5: stride on the 3x3 convolution); `width` multiplies every
    channel count, as in SimCLR's ResNet-50 (2x, 4x)."""
    stem = 64 * width
    x = ops.conv_bn(x, "conv1", 3, stem, kernel=7, stride=2, act="relu")
    x = ops.max_pool(x)
    cin = stem
    for stage, count in enumerate(blocks):
        planes = 64 * width * 2**stage
        cout = planes * 4 if bottleneck else planes
        for index in range(count):
            stride = 2 if stage > 0 and index == 0 else 1
            name = f"layer{stage + 1}.{index}"
            shortcut = x
            if stride != 1 or cin != cout:
                shortcut = ops.conv_bn(x, f"{name}.downsample", cin, cout, stride=stride)
            if bottleneck:
                y = ops.conv_bn(x, f"{name}.conv1", cin, planes, act="relu")
                y = ops.conv_bn(y, f"{name}.conv2", planes, planes, kernel=3, stride=stride,
                                act="relu")
                y = ops.conv_bn(y, f"{name}.conv3", planes, cout, last=True)
            else:
                y = ops.conv_bn(x, f"{name}.conv1", cin, planes, kernel=3, stride=stride,
                                act="relu")
                y = ops.conv_bn(y, f"{name}.conv2", planes, cout, kernel=3, last=True)
            x = ops.relu(ops.add(y, shortcut))
            cin = cout
    return ops.dense(ops.mean_pool(x), "fc", cin, 1000)


_MOBILENET_V2 = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                 (6, 160, 3, 2), (6, 320, 1, 1))
"""(expansion t, channels c, repeats n, first stride s), as in the MobileNetV2 paper."""


def _mobilenet_v2(ops, x):
    """torchvision's MobileNetV2 (width 1.0): inverted residuals with depthwise 3x3."""
    x = ops.conv_bn(x, "features.0", 3, 32, kernel=3, stride=2, act="relu6")
    cin, index = 32, 1
    for t, c, n, s in _MOBILENET_V2:
        for repeat in range(n):
            stride = s if repeat == 0 else 1
            name = f"features.{index}"
            hidden = cin * t
            y = x
            if t != 1:
                y = ops.conv_bn(y, f"{name}.expand", cin, hidden, act="relu6")
            y = ops.conv_bn(y, f"{name}.depthwise", hidden, hidden, kernel=3, stride=stride,
                            groups=hidden, act="relu6")
            y = ops.conv_bn(y, f"{name}.project", hidden, c, last=True)
            x = ops.add(y, x) if stride == 1 and cin == c else y
            cin, index = c, index + 1
    x = ops.conv_bn(x, "features.18", cin, 1280, act="relu6")
    return ops.dense(ops.mean_pool(x), "classifier", 1280, 1000)


NETWORKS: dict[str, Network] = {
    n.name: n
    for n in (
        Network("resnet18", "ResNet-18",
                partial(_resnet, blocks=(2, 2, 2, 2), bottleneck=False)),
        Network("resnet50", "ResNet-50",
                partial(_resnet, blocks=(3, 4, 6, 3), bottleneck=True)),
        Network("resnet152", "ResNet-152",
                partial(_resnet, blocks=(3, 8, 36, 3), bottleneck=True)),
        Network("mobilenet_v2", "MobileNetV2", _mobilenet_v2),
        Network("resnet50x4", "ResNet-50 (4x)",
                partial(_resnet, blocks=(3, 4, 6, 3), bottleneck=True, width=4)),
    )
}
"""Every benchmark network by name. resnet50x4 is SimCLR's ResNet-50 (4x), 375 M parameters."""


TINY = Network("tiny", "tiny", lambda ops, x: ops.conv_bn(x, "c", 3, 4), image=8)
"""One convolution and batch norm on an 8x8 image: what a measurement folds first, so
that one-time initialisation is not counted, and the baseline a command's peak memory is
read above."""


def tiny_exported():
    """`TINY` exported with its weights as constants (seed 0), in the `jax` form."""
    return export_stablehlo(TINY, make_weights(TINY, 0), weights_as="constants")


# --- weights ------------------------------------------------------------------------------


class _Collect:
    """A back end that only records the layers, in call order."""

    def __init__(self):
        self.layers: list[Layer] = []

    def conv_bn(self, x, name, cin, cout, *, kernel=1, stride=1, groups=1, act=None,
                last=False):
        self.layers.append(Layer(name, "conv_bn", cin, cout, kernel, stride, groups, last))
        return x

    def dense(self, x, name, cin, cout):
        self.layers.append(Layer(name, "dense", cin, cout))
        return x

    def add(self, x, y):
        return x

    def relu(self, x):
        return x

    def max_pool(self, x):
        return x

    def mean_pool(self, x):
        return x


def argument_parser(doc: str) -> argparse.ArgumentParser:
    """A benchmark script's parser: its docstring's first paragraph as the description,
    the rest as given, and the networks it may name listed after the options."""
    return argparse.ArgumentParser(
        description=doc.split("\n\n")[0],
        epilog="Networks: " + ", ".join(f"{n} ({s.title})" for n, s in NETWORKS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def layers_of(spec: Network) -> list[Layer]:
    """Every layer with weights, in the order the network calls them."""
    collect = _Collect()
    spec.build(collect, None)
    return collect.layers


def make_weights(spec: Network, seed: int) -> dict[str, np.ndarray]:
    """Seeded float32 weights in torch's layouts (OIHW kernels, [out, in] dense).

    Kernels are He-normal. Batch-norm statistics are drawn away from the identity (so that a
    wrong fold shows), and the last batch norm of each residual block gets a small scale, as
    torchvision's zero_init_residual does, so 50 blocks deep the activations stay finite.
    """
    rng = np.random.default_rng(seed)
    weights: dict[str, np.ndarray] = {}
    for layer in layers_of(spec):
        if layer.kind == "dense":
            bound = 1.0 / np.sqrt(layer.cin)
            weights[f"{layer.name}.weight"] = _uniform(rng, (layer.cout, layer.cin), bound)
            weights[f"{layer.name}.bias"] = _uniform(rng, (layer.cout,), bound)
            continue
        fan_in = layer.cin // layer.groups * layer.kernel**2
        shape = (layer.cout, layer.cin // layer.groups, layer.kernel, layer.kernel)
        kernel = rng.standard_normal(shape, dtype=np.float32)
        kernel *= np.float32(np.sqrt(2.0 / fan_in))
        weights[f"{layer.name}.conv.weight"] = kernel
        c = layer.cout
        gamma_high = 0.2 if layer.last_in_block else 1.5
        weights[f"{layer.name}.bn.weight"] = rng.uniform(0.1, gamma_high, c).astype(np.float32)
        weights[f"{layer.name}.bn.bias"] = rng.normal(0.0, 0.1, c).astype(np.float32)
        weights[f"{layer.name}.bn.running_mean"] = rng.normal(0.0, 0.1, c).astype(np.float32)
        weights[f"{layer.name}.bn.running_var"] = rng.uniform(0.5, 1.5, c).astype(np.float32)
    return weights


def _uniform(rng: np.random.Generator, shape, bound: float) -> np.ndarray:
    return rng.uniform(-bound, bound, shape).astype(np.float32)


def weight_bytes(weights: dict[str, np.ndarray]) -> int:
    """Bytes of all weights (kernels, batch-norm parameters and statistics, dense layers)."""
    return sum(a.nbytes for a in weights.values())


# --- StableHLO through JAX ----------------------------------------------------------------

_bn_primitive = None


def _batch_norm_primitive():
    """A JAX primitive that lowers to exactly one `stablehlo.batch_norm_inference`."""
    global _bn_primitive
    if _bn_primitive is not None:
        return _bn_primitive
    from jax._src.interpreters import mlir
    from jax.extend.core import Primitive
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    primitive = Primitive("bench_batch_norm_inference")
    primitive.def_abstract_eval(lambda x, *stats, epsilon, feature_index: x)

    def lower(ctx, x, scale, offset, mean, variance, *, epsilon, feature_index):
        op = stablehlo.BatchNormInferenceOp(
            x, scale, offset, mean, variance,
            ir.FloatAttr.get(ir.F32Type.get(), epsilon),
            ir.IntegerAttr.get(ir.IntegerType.get_signless(64), feature_index),
        )
        return [op.result]

    mlir.register_lowering(primitive, lower)
    _bn_primitive = primitive
    return primitive


FORMS = ("bn", "jax", "keras", "torch_mlir")
"""How each batch norm is written in the exported module:

- `bn`: one `stablehlo.batch_norm_inference` (through a one-op primitive; no JAX
  producer emits it, XLA's own frontends and hand-written StableHLO do);
- `jax`: what plain JAX and `flax.linen.BatchNorm` emit, `(y - mean) * (scale *
  rsqrt(var + eps)) + bias`, the per-channel part computed in the graph;
- `keras`: Keras 3 on JAX, `inv = rsqrt(var + eps) * gamma; y * inv + (beta - mean * inv)`;
- `torch_mlir`: the `jax` form written as MLIR text whose weight constants are
  `dense_resource` blobs, as torch-mlir writes them (`export_text`).
"""


class _JaxOps:
    """NHWC activations, HWIO kernels, weights looked up by name in `params`."""

    def __init__(self, params: dict, form: str = "bn"):
        self.params = params
        self.form = form
        self.bn = _batch_norm_primitive() if form == "bn" else None

    def _batch_norm(self, y, scale, offset, mean, variance):
        from jax import lax

        if self.form == "bn":
            return self.bn.bind(y, scale, offset, mean, variance, epsilon=EPSILON,
                                feature_index=3)
        if self.form == "keras":
            inv = lax.rsqrt(variance + EPSILON) * scale
            return y * inv + (offset - mean * inv)
        # flax.linen.BatchNorm (and torch-mlir's three activation-sized ops)
        return (y - mean) * (scale * lax.rsqrt(variance + EPSILON)) + offset

    def conv_bn(self, x, name, cin, cout, *, kernel=1, stride=1, groups=1, act=None,
                last=False):
        from jax import lax

        p = self.params
        pad = kernel // 2
        y = lax.conv_general_dilated(
            x, p[f"{name}.conv.weight"], (stride, stride), ((pad, pad), (pad, pad)),
            dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=groups,
        )
        stats = [p[f"{name}.bn.{s}"] for s in ("weight", "bias", "running_mean", "running_var")]
        y = self._batch_norm(y, *stats)
        if act == "relu":
            return self.relu(y)
        if act == "relu6":
            import jax.numpy as jnp

            return jnp.clip(y, 0.0, 6.0)
        return y

    def dense(self, x, name, cin, cout):
        return x @ self.params[f"{name}.weight"] + self.params[f"{name}.bias"]

    def add(self, x, y):
        return x + y

    def relu(self, x):
        import jax.numpy as jnp

        return jnp.maximum(x, 0.0)

    def max_pool(self, x):
        import jax.numpy as jnp
        from jax import lax

        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                                 ((0, 0), (1, 1), (1, 1), (0, 0)))

    def mean_pool(self, x):
        return x.mean(axis=(1, 2))


def jax_params(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The weights in JAX's layouts: HWIO kernels and [in, out] dense matrices."""
    out = {}
    for key, value in weights.items():
        if key.endswith(".conv.weight"):
            value = np.ascontiguousarray(value.transpose(2, 3, 1, 0))
        elif value.ndim == 2:
            value = np.ascontiguousarray(value.T)
        out[key] = value
    return out


def _jax_shape(name: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape `jax_params` gives weight `name` of torch shape `shape`."""
    if name.endswith(".conv.weight"):
        return tuple(shape[i] for i in (2, 3, 1, 0))
    return tuple(reversed(shape)) if len(shape) == 2 else tuple(shape)


def export_stablehlo(spec: Network, weights: dict[str, np.ndarray], *, weights_as: str,
                     batch: int = 1, form: str = "bn", platform: str = "cpu"):
    """A `jax.export.Exported` of `spec` on a `batch`x224x224x3 image, its batch norms
    written in `form` (see FORMS; `torch_mlir` exports as `jax`), lowered for `platform`
    (`"cpu"`, or `"cuda"` for gpu_latency.py).

    `weights_as="constants"`: the weights are dense constants in the module and `main`
    takes the image only. `weights_as="arguments"`: `main(image, *weights)`, in sorted
    name order.
    """
    if form == "torch_mlir":
        form = "jax"
    import jax
    import jax.numpy as jnp

    image = jax.ShapeDtypeStruct((batch, spec.image, spec.image, 3), jnp.float32)
    if weights_as == "constants":
        params = jax_params(weights)
        fn = jax.jit(lambda x: spec.build(_JaxOps(params, form), x))
        return jax.export.export(fn, platforms=[platform])(image)
    if weights_as == "arguments":
        names = sorted(weights)

        def fn(x, *values):
            return spec.build(_JaxOps(dict(zip(names, values)), form), x)

        specs = [jax.ShapeDtypeStruct(_jax_shape(n, weights[n].shape), jnp.float32)
                 for n in names]
        return jax.export.export(jax.jit(fn), platforms=[platform])(image, *specs)
    raise ValueError(f"weights_as must be 'constants' or 'arguments', got {weights_as!r}")


def export_text(exported) -> str:
    """The module of `exported` as MLIR text whose float constants of more than one
    element are `dense_resource` blobs (torch-mlir's way of writing weights)."""
    from jaxlib.mlir import ir

    from stablehlo_bnfold import io as sio

    context = sio.make_context()
    module = sio.load(exported.mlir_module_serialized, context).module
    blobs = []
    with context:
        def visit(op):
            if op.name == "stablehlo.constant":
                attr = op.attributes["value"]
                if isinstance(attr, ir.DenseElementsAttr) and not attr.is_splat:
                    shaped = ir.ShapedType(attr.type)
                    if isinstance(shaped.element_type, ir.F32Type):
                        array = np.array(attr, dtype=np.float32)
                        blobs.append(array)
                        op.attributes["value"] = ir.DenseResourceElementsAttr.get_from_buffer(
                            memoryview(array), f"w{len(blobs)}", attr.type)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        return str(module)


# --- the equivalent nn.Module -------------------------------------------------------------


def torch_module(spec: Network, weights: dict[str, np.ndarray]):
    """The same network as a `torch.nn.Module` in eval mode, sharing `weights`' memory.

    Every convolution is an `nn.Conv2d(bias=False)` called right before its
    `nn.BatchNorm2d`, the shape `torch.fx.experimental.optimization.fuse` looks for.
    """
    import torch
    from torch import nn

    class _TorchNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleDict()
            for layer in layers_of(spec):
                key = layer.name.replace(".", "_")
                if layer.kind == "dense":
                    self.layers[key] = nn.Linear(layer.cin, layer.cout)
                    continue
                self.layers[key + "_conv"] = nn.Conv2d(
                    layer.cin, layer.cout, layer.kernel, layer.stride, layer.kernel // 2,
                    groups=layer.groups, bias=False,
                )
                self.layers[key + "_bn"] = nn.BatchNorm2d(layer.cout, eps=EPSILON)

        def forward(self, x):
            return spec.build(_TorchOps(self.layers), x)

    class _TorchOps:
        def __init__(self, layers):
            self.layers = layers

        def conv_bn(self, x, name, cin, cout, *, kernel=1, stride=1, groups=1, act=None,
                    last=False):
            key = name.replace(".", "_")
            y = self.layers[key + "_bn"](self.layers[key + "_conv"](x))
            if act == "relu":
                return torch.relu(y)
            if act == "relu6":
                return torch.nn.functional.relu6(y)
            return y

        def dense(self, x, name, cin, cout):
            return self.layers[name.replace(".", "_")](x)

        def add(self, x, y):
            return x + y

        def relu(self, x):
            return torch.relu(x)

        def max_pool(self, x):
            return torch.nn.functional.max_pool2d(x, 3, 2, 1)

        def mean_pool(self, x):
            return x.mean(dim=(2, 3))

    net = _TorchNet()
    with torch.no_grad():
        for key, value in weights.items():
            layer, _, field = key.rpartition(".")
            module = net.layers[layer.replace(".", "_")]
            tensor = torch.from_numpy(value)
            if isinstance(getattr(module, field), nn.Parameter):
                setattr(module, field, nn.Parameter(tensor, requires_grad=False))
            else:
                setattr(module, field, tensor)
    return net.eval()
