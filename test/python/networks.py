"""Whole networks for test_networks.py, built and exported for real at test time by their own
libraries, with seeded random weights and non-trivial statistics (no downloads).

- Keras 3 applications on the JAX backend (`weights=None`): EfficientNetB0, MobileNetV2,
  MobileNetV3Small, ResNet50, ResNet50V2, DenseNet121, InceptionV3, ConvNeXtTiny.
- Flax linen: a small ResNet and a squeeze-excite network (EfficientNet's MBConv block) made
  by `StemAndTwoBlocks`, a pre-activation ResNet (`PreActResNet`, BN -> ReLU -> conv), a ViT
  encoder layer with Flax's `MultiHeadDotProductAttention`, a LeViT block (every projection
  a Dense layer, a reshape or transpose and a BatchNorm), and the pre-norm transformer and LLaMA blocks
  of flax_models.py.
- Equinox: a small ResNet (equinox_models.ResNet) whose BatchNorms debias their running
  statistics by the batch counter in their state, in the graph.
- torchvision through torch-mlir: DenseNet, EfficientNet-B0, MobileNetV3-small and RegNetY,
  torchvision's own classes in small configurations, exported by the checked-in script
  test/testdata/torchvision/generate.py (torch is not needed to run the tests): MLIR text as
  torch-mlir prints it, weights as `dense_resource` blobs, a static batch of 1 and, for two
  of them, a symbolic batch.

Each is exported with `jax.export` in a `Variant`: weights as constants (closed over) or as
arguments (Keras: `model.stateless_call(trainable, non_trainable, x, training=False)`,
Flax: `model.apply(variables, x)`, Equinox: `(params, state, x)`), a static batch of 1 or a symbolic batch
(`jax.export.symbolic_shape("b")`), and f32, mixed bf16 (bf16 compute, f32 weights and norm
statistics: Keras's "mixed_bfloat16" policy, Flax's `dtype=bfloat16`) or pure bf16
(weights and input in bf16). The data input is always the last argument of `@main`.

Every weight is drawn from one seeded generator, in the order the library lists them:
kernels normal with variance 1/fan_in, biases and shifts N(0, 0.2²), moving means
N(0, 0.2²), moving variances U(0.5, 1.5), and batch-norm / layer-norm scales U(0.5, 1.5)
with a random sign (some negative), so a fold that dropped or misplaced one would show.
"""

from __future__ import annotations

import functools
import os
import pathlib

# Keras picks its backend once, at its first import; TensorFlow (its default) is not
# installed. setdefault leaves a backend the caller chose alone.
os.environ.setdefault("KERAS_BACKEND", "jax")

from dataclasses import dataclass  # noqa: E402
from typing import Callable  # noqa: E402

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from flax_models import LlamaBlock, PreNormTransformerBlock  # noqa: E402
from helpers import with_static_batch  # noqa: E402
from jax import export  # noqa: E402

from stablehlo_bnfold.io import load, make_context  # noqa: E402
from stablehlo_bnfold.verification import run_on_cpu  # noqa: E402

__all__ = ["EQUINOX", "FLAX", "KERAS", "TORCHVISION", "Exported", "Variant", "export_network", "run"]

BATCH = 1
"""The static batch. A symbolic batch is run with `RUN_BATCH`."""
RUN_BATCH = 2


@dataclass(frozen=True)
class Variant:
    """How a network is exported: `weights` "constants" or "arguments", `batch` "static" or
    "symbolic", `dtype` "f32", "mixed_bf16" or "bf16"."""

    weights: str = "constants"
    batch: str = "static"
    dtype: str = "f32"

    def __str__(self) -> str:
        return f"{self.weights}-{self.batch}-{self.dtype}"


@dataclass(frozen=True)
class Exported:
    """An exported network (a `jax.export.Exported`, or torch-mlir's MLIR text) and the
    arguments it is called with (weights, then a seeded standard-normal input of batch
    `RUN_BATCH` for a symbolic batch, else `BATCH`)."""

    exported: export.Exported | str
    arguments: Callable[[int], tuple]


# --- seeded parameters ------------------------------------------------------------------


def _parameter(kind: str, shape: tuple[int, ...], fan_in: int, rng: np.random.Generator) -> np.ndarray:
    """A seeded value for a parameter of `kind` (see the module docstring)."""
    if kind in ("moving_variance", "variance", "var"):
        return rng.uniform(0.5, 1.5, shape)
    if kind in ("moving_mean", "mean"):
        return rng.normal(0.0, 0.2, shape)
    if kind in ("gamma", "scale"):
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 1.5, shape)
    if kind in ("beta", "bias"):
        return rng.normal(0.0, 0.2, shape)
    return rng.normal(0.0, 1.0 / np.sqrt(max(fan_in, 1)), shape)


def _flax_variables(shapes, seed: int):
    """Variables of the shapes and dtypes of `shapes` (as `jax.eval_shape(model.init, ...)`
    gives), each a seeded value of its kind (its last path name); a kernel's fan-in is the
    product of all but its last dimension (Flax's convolution kernels are HWIO, grouped
    ones HW(I/g)O)."""
    rng = np.random.default_rng(seed)

    def draw(path, leaf):
        kind = str(getattr(path[-1], "key", path[-1]))
        value = _parameter(kind, leaf.shape, int(np.prod(leaf.shape[:-1])), rng)
        return jnp.asarray(value, leaf.dtype)

    return jax.tree_util.tree_map_with_path(draw, shapes)


# --- Keras 3 applications ---------------------------------------------------------------

KERAS = {
    "keras_efficientnet_b0": ("EfficientNetB0", (64, 64, 3)),
    "keras_mobilenet_v2": ("MobileNetV2", (64, 64, 3)),
    "keras_mobilenet_v3_small": ("MobileNetV3Small", (64, 64, 3)),
    "keras_resnet50": ("ResNet50", (64, 64, 3)),
    "keras_resnet50_v2": ("ResNet50V2", (64, 64, 3)),
    "keras_densenet121": ("DenseNet121", (64, 64, 3)),
    "keras_inception_v3": ("InceptionV3", (139, 139, 3)),
    "keras_convnext_tiny": ("ConvNeXtTiny", (64, 64, 3)),
}
"""Network name: (keras.applications constructor, input shape without the batch). Inputs
are as small as the architecture allows while its smallest feature map stays at least
2x2 (InceptionV3 at 139: 3x3), so every norm acts on a map of at least two dimensions
larger than one besides the batch (see test_networks.activation_sized)."""

_KERAS_POLICY = {"f32": "float32", "mixed_bf16": "mixed_bfloat16", "bf16": "bfloat16"}


def _keras_model(name: str, dtype: str, seed: int = 0) -> keras.Model:
    """keras.applications' `name` with 5 classes and no classifier activation (a softmax
    would hide differences in saturated logits), its weights seeded.

    The model is built in a `keras.StatelessScope`, where Keras records each variable's
    initializer instead of running it; each is replaced by a seeded value before the
    scope initializes them on exit. (Running Keras's random initializers on JAX compiles
    one XLA program per weight shape: about a minute per network on 2 cores.)"""
    constructor, shape = KERAS[name]
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(_KERAS_POLICY[dtype])
    try:
        with keras.StatelessScope():
            model = getattr(keras.applications, constructor)(
                weights=None, input_shape=shape, classes=5, classifier_activation=None
            )
            rng = np.random.default_rng(seed)
            for layer in model.layers:
                depthwise = isinstance(layer, keras.layers.DepthwiseConv2D)
                for variable in layer.weights:
                    shape_ = tuple(variable.shape)
                    fan_in = int(np.prod(shape_[:2] if depthwise else shape_[:-1]))
                    kind = variable.path.rsplit("/", 1)[-1]
                    value = _parameter(kind, shape_, fan_in, rng)
                    variable._initializer = lambda shape, dtype=None, value=value: np.asarray(value, dtype)
    finally:
        keras.config.set_dtype_policy(previous)
    return model


def _export_keras(name: str, variant: Variant) -> Exported:
    model = _keras_model(name, variant.dtype)
    spec = _input_spec(KERAS[name][1], variant, np.float32)
    if variant.weights == "constants":
        exported = export.export(jax.jit(lambda x: model(x, training=False)))(spec)
        weights: tuple = ()
    else:
        trainable = [v.value for v in model.trainable_variables]
        non_trainable = [v.value for v in model.non_trainable_variables]

        def call(trainable, non_trainable, x):
            return model.stateless_call(trainable, non_trainable, x, training=False)[0]

        exported = export.export(jax.jit(call))(trainable, non_trainable, spec)
        weights = (trainable, non_trainable)
    return Exported(exported, _arguments(weights, KERAS[name][1], variant, np.float32))


# --- Flax -------------------------------------------------------------------------------


class _BasicBlock(nn.Module):
    """ResNet's basic block: conv-BN-relu-conv-BN plus the shortcut (a strided 1x1
    convolution and BN when the shape changes), then relu."""

    features: int
    strides: int = 1
    dtype: object = None

    @nn.compact
    def __call__(self, x):
        bn = lambda: nn.BatchNorm(use_running_average=True, dtype=self.dtype)  # noqa: E731
        conv = lambda k, s=1: nn.Conv(self.features, (k, k), (s, s), use_bias=False, dtype=self.dtype)  # noqa: E731
        y = nn.relu(bn()(conv(3, self.strides)(x)))
        y = bn()(conv(3)(y))
        if x.shape[-1] != self.features or self.strides != 1:
            x = bn()(conv(1, self.strides)(x))
        return nn.relu(x + y)


class _MBConv(nn.Module):
    """EfficientNet / MobileNetV3's inverted residual block with squeeze-excite: 1x1
    expansion conv-BN-swish, depthwise 3x3 conv-BN-swish, the squeeze-excite gate (global
    mean -> Dense -> swish -> Dense -> sigmoid, multiplied into the activation), then the
    1x1 projection conv-BN, plus the input when the shapes agree."""

    features: int
    expand: int = 4
    strides: int = 1
    dtype: object = None

    @nn.compact
    def __call__(self, x):
        bn = lambda: nn.BatchNorm(use_running_average=True, dtype=self.dtype)  # noqa: E731
        wide = x.shape[-1] * self.expand
        h = nn.swish(bn()(nn.Conv(wide, (1, 1), use_bias=False, dtype=self.dtype)(x)))
        h = nn.Conv(wide, (3, 3), (self.strides,) * 2, feature_group_count=wide, use_bias=False, dtype=self.dtype)(h)
        h = nn.swish(bn()(h))
        s = jnp.mean(h, axis=(1, 2), keepdims=True)
        s = nn.swish(nn.Dense(max(wide // 4, 1), dtype=self.dtype)(s))
        h = h * nn.sigmoid(nn.Dense(wide, dtype=self.dtype)(s))
        h = bn()(nn.Conv(self.features, (1, 1), use_bias=False, dtype=self.dtype)(h))
        return x + h if x.shape == h.shape else h


class StemAndTwoBlocks(nn.Module):
    """A small convolutional network: a 3x3 stem convolution with BN and `activation`, two
    `block`s (8 features, then 16 strided by 2), global average pooling and a Dense
    classifier. With `_BasicBlock` and relu a ResNet, with `_MBConv` and swish a
    squeeze-excite network (EfficientNet / MobileNetV3 style)."""

    block: type
    activation: Callable
    dtype: object = None

    @nn.compact
    def __call__(self, x):
        x = nn.Conv(8, (3, 3), use_bias=False, dtype=self.dtype)(x)
        x = self.activation(nn.BatchNorm(use_running_average=True, dtype=self.dtype)(x))
        x = self.block(8, dtype=self.dtype)(x)
        x = self.block(16, strides=2, dtype=self.dtype)(x)
        return nn.Dense(5, dtype=self.dtype)(jnp.mean(x, axis=(1, 2)))


class _PreActBlock(_BasicBlock):
    """ResNetV2's pre-activation basic block: BN-relu, then conv-BN-relu-conv, plus the
    shortcut (a strided 1x1 convolution of the pre-activation when the shape changes, else
    the input); the fields of `_BasicBlock`."""

    @nn.compact
    def __call__(self, x):
        bn = lambda: nn.BatchNorm(use_running_average=True, dtype=self.dtype)  # noqa: E731
        conv = lambda k, s=1: nn.Conv(self.features, (k, k), (s, s), use_bias=False, dtype=self.dtype)  # noqa: E731
        h = nn.relu(bn()(x))
        shortcut = x
        if x.shape[-1] != self.features or self.strides != 1:
            shortcut = conv(1, self.strides)(h)
        y = conv(3, self.strides)(h)
        y = conv(3)(nn.relu(bn()(y)))
        return shortcut + y


class PreActResNet(nn.Module):
    """A small pre-activation ResNet (ResNetV2): a 3x3 stem convolution, two
    `_PreActBlock`s (8 features, then 16 strided by 2), then BN, relu, global average
    pooling and a Dense classifier."""

    dtype: object = None

    @nn.compact
    def __call__(self, x):
        x = nn.Conv(8, (3, 3), use_bias=False, dtype=self.dtype)(x)
        x = _PreActBlock(8, dtype=self.dtype)(x)
        x = _PreActBlock(16, strides=2, dtype=self.dtype)(x)
        x = nn.relu(nn.BatchNorm(use_running_average=True, dtype=self.dtype)(x))
        return nn.Dense(5, dtype=self.dtype)(jnp.mean(x, axis=(1, 2)))


class WeightNormNet(nn.Module):
    """Weight-normalized convolutions (`nn.WeightNorm`: the kernel computed as g * v / |v|
    from its parameters) each followed by BatchNorm and relu, then global average pooling
    and a Dense classifier."""

    @nn.compact
    def __call__(self, x):
        for features, strides in ((8, 1), (16, 2)):
            x = nn.WeightNorm(nn.Conv(features, (3, 3), strides=strides, use_bias=False))(x)
            x = nn.relu(nn.BatchNorm(use_running_average=True)(x))
        return nn.Dense(5)(jnp.mean(x, axis=(1, 2)))


class ViTLayer(nn.Module):
    """A ViT encoder layer: x + MHA(LayerNorm(x)) with Flax's
    `MultiHeadDotProductAttention` (q, k, v projections with [heads, head_dim] biases),
    then x + MLP(LayerNorm(x)) with GELU."""

    heads: int = 2
    mlp_ratio: int = 4
    dtype: object = None

    @nn.compact
    def __call__(self, x):
        d = x.shape[-1]
        h = nn.LayerNorm(dtype=self.dtype)(x)
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads, dtype=self.dtype)(h, h)
        h = nn.LayerNorm(dtype=self.dtype)(x)
        h = nn.gelu(nn.Dense(self.mlp_ratio * d, dtype=self.dtype)(h))
        return x + nn.Dense(d, dtype=self.dtype)(h)


class _LinearBatchNorm(nn.Module):
    """LeViT's Linear_BN: a Dense layer without bias, then BatchNorm1d over the tokens
    flattened into the batch (torch's `bn(x.flatten(0, 1)).reshape_as(x)`); with
    `channels_first`, over the features of [B, C, N] instead (`bn(x.transpose(1,
    2)).transpose(1, 2)`)."""

    features: int
    channels_first: bool = False
    dtype: object = None

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(self.features, use_bias=False, dtype=self.dtype)(x)
        if self.channels_first:
            norm = nn.BatchNorm(use_running_average=True, axis=1, dtype=self.dtype)
            return norm(y.transpose(0, 2, 1)).transpose(0, 2, 1)
        flat = nn.BatchNorm(use_running_average=True, dtype=self.dtype)(y.reshape(-1, self.features))
        return flat.reshape(y.shape)


class LeViTBlock(nn.Module):
    """A LeViT stage's two residuals, every projection a Linear_BN: x + proj(hardswish(
    attention)) with q, k, v split from one Linear_BN into heads (the flattened form),
    then x + Linear_BN(hardswish(Linear_BN(x))) (the channels-first form)."""

    heads: int = 2
    dtype: object = None

    @nn.compact
    def __call__(self, x):
        d = x.shape[-1]
        qkv = _LinearBatchNorm(3 * d, dtype=self.dtype)(x)
        qkv = qkv.reshape(*x.shape[:-1], self.heads, 3 * d // self.heads)
        q, k, v = jnp.split(qkv, 3, axis=-1)
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d // self.heads)
        attention = jnp.einsum("bhqk,bkhd->bqhd", nn.softmax(logits), v).reshape(x.shape)
        x = x + _LinearBatchNorm(d, dtype=self.dtype)(nn.hard_swish(attention))
        h = nn.hard_swish(_LinearBatchNorm(2 * d, channels_first=True, dtype=self.dtype)(x))
        return x + _LinearBatchNorm(d, channels_first=True, dtype=self.dtype)(h)


def _conv_bn(x, features, kernel, padding, strides=1, groups=1, dtype=None):
    """A convolution without bias and its BatchNorm: one branch of a re-parameterizable
    block (torch's explicit padding, not 'SAME', as the blocks' authors write it)."""
    conv = nn.Conv(features, kernel, (strides,) * 2, padding=padding, feature_group_count=groups,
                   use_bias=False, dtype=dtype)
    return nn.BatchNorm(use_running_average=True, dtype=dtype)(conv(x))


class RepVGGBlock(nn.Module):
    """RepVGG's training-time block: relu(BN(conv3x3(x)) + BN(conv1x1(x)) + BN(x)), the
    identity branch only where the shape is kept (stride one, same features); `act` silu
    and no identity is RT-DETR / PP-YOLOE's RepVggBlock."""

    features: int
    strides: int = 1
    identity: bool = True
    act: Callable = nn.relu
    dtype: object = None

    @nn.compact
    def __call__(self, x):
        y = _conv_bn(x, self.features, (3, 3), ((1, 1), (1, 1)), self.strides, dtype=self.dtype)
        y = y + _conv_bn(x, self.features, (1, 1), ((0, 0), (0, 0)), self.strides, dtype=self.dtype)
        if self.identity and self.strides == 1 and x.shape[-1] == self.features:
            y = y + nn.BatchNorm(use_running_average=True, dtype=self.dtype)(x)
        return self.act(y)


class MobileOneBlock(nn.Module):
    """MobileOne's block: a depthwise stage, `k` depthwise 3x3 branches, a depthwise 1x1
    ("scale") branch and BN(x), summed in MobileOne's order (identity, scale, then each
    3x3), relu; then a pointwise stage, `k` 1x1 branches and BN(x) where the features are
    kept, relu."""

    features: int
    strides: int = 1
    k: int = 2
    dtype: object = None

    @nn.compact
    def __call__(self, x):
        c = x.shape[-1]
        out = nn.BatchNorm(use_running_average=True, dtype=self.dtype)(x) if self.strides == 1 else 0
        out = out + _conv_bn(x, c, (1, 1), ((0, 0), (0, 0)), self.strides, c, self.dtype)
        for _ in range(self.k):
            out = out + _conv_bn(x, c, (3, 3), ((1, 1), (1, 1)), self.strides, c, self.dtype)
        x = nn.relu(out)
        out = nn.BatchNorm(use_running_average=True, dtype=self.dtype)(x) if c == self.features else 0
        for _ in range(self.k):
            out = out + _conv_bn(x, self.features, (1, 1), ((0, 0), (0, 0)), dtype=self.dtype)
        return nn.relu(out)


class ACBlock(nn.Module):
    """ACNet's asymmetric convolution block: BN(conv3x3(x)) + BN(conv1x3(x)) +
    BN(conv3x1(x)), relu."""

    features: int
    dtype: object = None

    @nn.compact
    def __call__(self, x):
        y = _conv_bn(x, self.features, (3, 3), ((1, 1), (1, 1)), dtype=self.dtype)
        y = y + _conv_bn(x, self.features, (1, 3), ((0, 0), (1, 1)), dtype=self.dtype)
        y = y + _conv_bn(x, self.features, (3, 1), ((1, 1), (0, 0)), dtype=self.dtype)
        return nn.relu(y)


class RepNet(nn.Module):
    """Structural re-parameterization's blocks in one network: a stride-2 RepVGG block (no
    identity), a RepVGG block, a MobileOne block, an ACNet block and RT-DETR's RepVggBlock
    (silu, no identity), then global average pooling and a Dense classifier. Deployed
    (each block's branches merged), one convolution per block and stage: 6."""

    dtype: object = None

    @nn.compact
    def __call__(self, x):
        x = RepVGGBlock(8, strides=2, dtype=self.dtype)(x)
        x = RepVGGBlock(8, dtype=self.dtype)(x)
        x = MobileOneBlock(8, dtype=self.dtype)(x)
        x = ACBlock(8, dtype=self.dtype)(x)
        x = RepVGGBlock(8, identity=False, act=nn.silu, dtype=self.dtype)(x)
        return nn.Dense(5, dtype=self.dtype)(jnp.mean(x, axis=(1, 2)))


FLAX = {
    "flax_resnet": (functools.partial(StemAndTwoBlocks, _BasicBlock, nn.relu), (16, 16, 3)),
    "flax_se_net": (functools.partial(StemAndTwoBlocks, _MBConv, nn.swish), (16, 16, 3)),
    "flax_preact_resnet": (PreActResNet, (16, 16, 3)),
    "flax_vit_layer": (ViTLayer, (8, 16)),
    "flax_prenorm_transformer": (PreNormTransformerBlock, (8, 16)),
    "flax_llama": (LlamaBlock, (8, 16)),
    "flax_levit": (LeViTBlock, (8, 16)),
    "flax_weight_norm": (WeightNormNet, (16, 16, 3)),
    "flax_repnet": (RepNet, (16, 16, 3)),
}
"""Network name: (module constructor, input shape without the batch). The modules with a
`dtype` field run mixed bf16 (`dtype=bfloat16`, f32 parameters); flax_models.py's blocks do
not, and run f32 or pure bf16."""


def _export_flax(name: str, variant: Variant) -> Exported:
    cls, shape = FLAX[name]
    if variant.dtype == "mixed_bf16":
        model = cls(dtype=jnp.bfloat16)
    else:
        model = cls()
    x_dtype = ml_dtypes.bfloat16 if variant.dtype == "bf16" else np.float32
    # Only the shapes: every value is drawn by _flax_variables (running Flax's initializers
    # op by op would compile one XLA program per shape).
    shapes = jax.eval_shape(model.init, jax.random.PRNGKey(0), jax.ShapeDtypeStruct((BATCH, *shape), np.float32))
    variables = _flax_variables(shapes, seed=0)
    if variant.dtype == "bf16":
        variables = jax.tree.map(lambda a: a.astype(jnp.bfloat16), variables)
    spec = _input_spec(shape, variant, x_dtype)
    if variant.weights == "constants":
        exported = export.export(jax.jit(lambda x: model.apply(variables, x)))(spec)
        weights: tuple = ()
    else:
        exported = export.export(jax.jit(model.apply))(variables, spec)
        weights = (variables,)
    return Exported(exported, _arguments(weights, shape, variant, x_dtype))


# --- Equinox ----------------------------------------------------------------------------

EQUINOX = {"equinox_resnet": ("ResNet", (3, 16, 16))}
"""Network name: (class in equinox_models.py, input shape without the batch, CHW). Its
BatchNorms run in mode "batch" with the counter at 3: the running statistics are
debiased in the graph."""


def _export_equinox(name: str, variant: Variant) -> Exported:
    import equinox as eqx  # (only where an Equinox network is asked for)
    import equinox_models

    cls, shape = EQUINOX[name]
    if variant.dtype != "f32":
        raise ValueError(f"{name} is exported in f32 only")
    model, state = equinox_models.seeded_inference(getattr(equinox_models, cls), count=3)
    spec = _input_spec(shape, variant, np.float32)
    if variant.weights == "constants":
        def closed(x):
            return jax.vmap(lambda image: model(image, state)[0])(x)

        exported = export.export(jax.jit(closed))(spec)
        weights: tuple = ()
    else:
        params, static = eqx.partition(model, eqx.is_array)

        def applied(params, state, x):
            network = eqx.combine(params, static)
            return jax.vmap(lambda image: network(image, state)[0])(x)

        exported = export.export(jax.jit(applied))(params, state, spec)
        weights = (params, state)
    return Exported(exported, _arguments(weights, shape, variant, np.float32))


# --- shared -----------------------------------------------------------------------------


def _input_spec(shape: tuple[int, ...], variant: Variant, dtype) -> jax.ShapeDtypeStruct:
    batch = export.symbolic_shape("b")[0] if variant.batch == "symbolic" else BATCH
    return jax.ShapeDtypeStruct((batch, *shape), dtype)


def _arguments(weights: tuple, shape: tuple[int, ...], variant: Variant, dtype) -> Callable[[int], tuple]:
    batch = RUN_BATCH if variant.batch == "symbolic" else BATCH

    def arguments(seed: int) -> tuple:
        x = np.random.default_rng(seed).standard_normal((batch, *shape)).astype(dtype)
        return (*weights, x)

    return arguments


TORCHVISION_DATA = pathlib.Path(__file__).resolve().parents[1] / "testdata" / "torchvision"
TORCHVISION = {
    "torchvision_densenet": ("densenet", ("static", "symbolic")),
    "torchvision_efficientnet": ("efficientnet", ("static",)),
    "torchvision_mobilenet_v3": ("mobilenet_v3", ("static",)),
    "torchvision_regnet_y": ("regnet_y", ("static", "symbolic")),
}
"""Network name: (file in test/testdata/torchvision, the batches it was exported with: a
symbolic batch is the file with `_dyn`). Input 3x64x64 (NCHW), weights as constants, f32."""


def _read_torchvision(name: str, variant: Variant) -> Exported:
    stem, batches = TORCHVISION[name]
    if variant.weights != "constants" or variant.dtype != "f32" or variant.batch not in batches:
        raise ValueError(f"{name} was exported with f32 constants and batches {batches} only")
    suffix = "_dyn" if variant.batch == "symbolic" else ""
    text = (TORCHVISION_DATA / f"{stem}{suffix}.mlir").read_text()
    return Exported(text, _arguments((), (3, 64, 64), variant, np.float32))


def export_network(name: str, variant: Variant) -> Exported:
    """The network `name` (a key of KERAS, FLAX, EQUINOX or TORCHVISION) exported in `variant`.

    >>> net = export_network("flax_resnet", Variant(weights="arguments"))   # doctest: +SKIP
    >>> run(net.exported, net.arguments(seed=0))                            # doctest: +SKIP
    """
    if name in KERAS:
        return _export_keras(name, variant)
    if name in TORCHVISION:
        return _read_torchvision(name, variant)
    if name in EQUINOX:
        return _export_equinox(name, variant)
    return _export_flax(name, variant)


def run(module: export.Exported | str, arguments: tuple) -> np.ndarray:
    """The output of `module` on `arguments`: an `Exported` through its own `call`; MLIR text
    through XLA on the CPU, its `dense_resource` weights (which XLA refuses) read into
    `dense` constants first, a symbolic batch set to the input's."""
    if not isinstance(module, str):
        return np.asarray(module.call(*arguments))
    with make_context() as context:
        text = str(load(module, context).module)
    batch = arguments[-1].shape[0]
    (output,) = run_on_cpu(with_static_batch(text, batch), list(arguments))
    return output
