"""Writes the numerical test modules in this directory (test/python/test_testdata.py runs them).

    python3 test/testdata/generate.py            # rewrite every module
    python3 test/testdata/generate.py --check    # exit 1 if a module on disk is stale

Each module is one `@main` function whose weights and batch-norm statistics are constants
drawn from `numpy.random.default_rng(seed)`, one fixed seed per module, so regenerating one
module never changes another. Constants are written exactly: 1-D vectors as decimals that
parse back to the same value in any element type (the `repr` of the value as a float64,
which every f16, bf16 and f32 value is exactly), everything else as MLIR's hex form (the
raw little-endian bytes).

Every file opens with a header the runner reads:

    // EXPECT-BATCH-NORMS-LEFT: <n>    batch_norm_inference ops left after folding
    // EXPECT-SKIP: <reason>           a reason the report must give (one line per skip)
    // EXPECT-FOLDS: <n>                folds the report lists, where not one per batch norm
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
COMMAND = "python3 test/testdata/generate.py"

_DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}


@dataclass(frozen=True)
class Case:
    """One module: its file name, what it covers, and what folding must leave."""

    name: str
    covers: str
    seed: int
    build: Callable[[Builder], str]
    batch_norms_left: int = 0
    skips: tuple[str, ...] = ()
    folds: int | None = None
    """Folds the report must count, for modules whose batch norms are decomposed (by
    default one per batch_norm_inference removed)."""


class Builder:
    """Emits constants and batch norms for one module, in one element type."""

    def __init__(self, seed: int, element: str):
        self.rng = np.random.default_rng(seed)
        self.element = element
        self.dtype = _DTYPES[element]
        self.lines: list[str] = []

    def type(self, shape: tuple[int, ...]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}x{self.element}>"

    def constant(self, name: str, values: np.ndarray) -> str:
        """`%name = stablehlo.constant ...` holding `values` rounded to the element type."""
        values = np.asarray(values).astype(self.dtype)
        if values.ndim == 1:
            body = "[" + ", ".join(repr(float(v)) for v in values) + "]"
        else:
            raw = values.view(np.uint16) if self.element == "bf16" else values
            body = '"0x' + raw.astype(raw.dtype.newbyteorder("<")).tobytes().hex().upper() + '"'
        self.lines.append(
            f"  %{name} = stablehlo.constant dense<{body}> : {self.type(values.shape)}"
        )
        return f"%{name}"

    def kernel(self, name: str, shape: tuple[int, ...], fan_in: int) -> str:
        """Weights with He-like scale, so every layer's output stays near unit size."""
        return self.constant(name, self.rng.standard_normal(shape) / np.sqrt(fan_in))

    def vector(self, name: str, channels: int, low: float, high: float) -> str:
        return self.constant(name, self.rng.uniform(low, high, channels))

    def batch_norm(
        self, name: str, operand: str, shape: tuple[int, ...], feature: int, epsilon: float
    ) -> str:
        """`%name = batch_norm_inference(operand)` over `feature`, with random statistics."""
        channels = shape[feature]
        stats = [
            self.vector(f"{name}_scale", channels, 0.5, 1.5),
            self.vector(f"{name}_offset", channels, -0.2, 0.2),
            self.vector(f"{name}_mean", channels, -0.3, 0.3),
            self.vector(f"{name}_variance", channels, 0.5, 2.0),
        ]
        vec, full = self.type((channels,)), self.type(shape)
        self.lines.append(
            f'  %{name} = "stablehlo.batch_norm_inference"({operand}, {", ".join(stats)}) '
            f"{{epsilon = {epsilon:.1e} : f32, feature_index = {feature} : i64}} : "
            f"({full}, {vec}, {vec}, {vec}, {vec}) -> {full}"
        )
        return f"%{name}"

    def bias(self, name: str, operand: str, shape: tuple[int, ...], feature: int) -> str:
        """`operand + broadcast_in_dim(b, dims=[feature])` with a random per-channel b."""
        b = self.vector(f"{name}_b", shape[feature], -0.3, 0.3)
        full = self.type(shape)
        self.lines.append(
            f"  %{name}_bcast = stablehlo.broadcast_in_dim {b}, dims = [{feature}] : "
            f"({self.type((shape[feature],))}) -> {full}"
        )
        self.lines.append(f"  %{name} = stablehlo.add {operand}, %{name}_bcast : {full}")
        return f"%{name}"

    def relu(self, name: str, operand: str, shape: tuple[int, ...]) -> str:
        full = self.type(shape)
        self.lines.append(f"  %{name}_zero = stablehlo.constant dense<0.0> : {full}")
        self.lines.append(f"  %{name} = stablehlo.maximum {operand}, %{name}_zero : {full}")
        return f"%{name}"

    def op(self, line: str) -> None:
        self.lines.append("  " + line)

    def function(
        self, args: list[tuple[str, tuple[int, ...]]], results: list[tuple[str, tuple[int, ...]]]
    ) -> str:
        params = ", ".join(f"{name}: {self.type(shape)}" for name, shape in args)
        types = ", ".join(self.type(shape) for _, shape in results)
        values = ", ".join(name for name, _ in results)
        body = "\n".join(self.lines)
        return (
            f"func.func @main({params}) -> ({types}) {{\n{body}\n"
            f"  return {values} : {types}\n}}\n"
        )


@dataclass(frozen=True)
class Conv:
    """One convolution: operand shapes, dimension numbers and window, as StableHLO prints them."""

    x: tuple[int, ...]
    kernel: tuple[int, ...]
    y: tuple[int, ...]
    dims: str
    window: str
    feature_groups: int = 1
    batch_groups: int = 1

    @property
    def feature(self) -> int:
        """The result's output-feature dimension, read from `dims`."""
        return self.dims.split("->")[1].strip("[]").split(", ").index("f")

    def emit(self, b: Builder, name: str, lhs: str) -> str:
        """`%name = stablehlo.convolution(lhs, %name_k)` with random constant weights."""
        fan_in = int(np.prod(self.kernel)) // self.y[self.feature]
        kernel = b.kernel(f"{name}_k", self.kernel, fan_in)
        x, k, y = b.type(self.x), b.type(self.kernel), b.type(self.y)
        b.op(
            f"%{name} = stablehlo.convolution({lhs}, {kernel}) dim_numbers = {self.dims}, "
            f"window = {{{self.window}}} {{batch_group_count = {self.batch_groups} : i64, "
            f"feature_group_count = {self.feature_groups} : i64}} : ({x}, {k}) -> {y}"
        )
        return f"%{name}"


NHWC_HWIO = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
NCHW_OIHW = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"
OHWI = "[b, 0, 1, f]x[o, 0, 1, i]->[b, 0, 1, f]"
SAME_3X3 = "stride = [1, 1], pad = [[1, 1], [1, 1]]"


def conv_bn(conv: Conv, epsilon: float, bias: bool = False) -> Callable[[Builder], str]:
    """A module `batch_norm_inference(conv(x) [+ per-channel bias])` over the output features."""

    def build(b: Builder) -> str:
        y = conv.emit(b, "conv", "%x")
        if bias:
            y = b.bias("biased", y, conv.y, conv.feature)
        bn = b.batch_norm("bn", y, conv.y, conv.feature, epsilon)
        return b.function([("%x", conv.x)], [(bn, conv.y)])

    return build


def bn_conv(conv: Conv, epsilon: float) -> Callable[[Builder], str]:
    """A module `conv(batch_norm_inference(x))`, the batch norm over the input features."""

    def build(b: Builder) -> str:
        feature = conv.dims.split("x")[0].strip("[]").split(", ").index("f")
        bn = b.batch_norm("bn", "%x", conv.x, feature, epsilon)
        return b.function([("%x", conv.x)], [(conv.emit(b, "conv", bn), conv.y)])

    return build


def bn_dense(b: Builder) -> str:
    # A BNNeck: batch norm on an embedding, then a classifier x . W with W on the right.
    x, w, y = (8, 16), (16, 12), (8, 12)
    bn = b.batch_norm("bn", "%x", x, 1, 1e-5)
    k = b.kernel("w", w, 16)
    b.op(f"%logits = stablehlo.dot_general {bn}, {k}, contracting_dims = [1] x [0] : "
         f"({b.type(x)}, {b.type(w)}) -> {b.type(y)}")
    return b.function([("%x", x)], [("%logits", y)])


def dense(b: Builder) -> str:
    # Layer 1: x . W1 (weights on the right, feature = result dim 1) + bias, batch norm, relu.
    # Layer 2: W2 . h^T (weights on the left, feature = result dim 0), batch norm.
    x, w1, h, w2, z = (8, 16), (16, 12), (8, 12), (10, 12), (10, 8)
    k1 = b.kernel("w1", w1, 16)
    b.op(f"%mm1 = stablehlo.dot_general %x, {k1}, contracting_dims = [1] x [0] : "
         f"({b.type(x)}, {b.type(w1)}) -> {b.type(h)}")
    biased = b.bias("biased", "%mm1", h, 1)
    bn1 = b.batch_norm("bn1", biased, h, 1, 1e-5)
    act = b.relu("relu", bn1, h)
    k2 = b.kernel("w2", w2, 12)
    b.op(f"%mm2 = stablehlo.dot_general {k2}, {act}, contracting_dims = [1] x [1] : "
         f"({b.type(w2)}, {b.type(h)}) -> {b.type(z)}")
    bn2 = b.batch_norm("bn2", "%mm2", z, 0, 1e-5)
    return b.function([("%x", x)], [(bn2, z)])


def two_blocks(b: Builder) -> str:
    # conv + bias + bn + relu (NHWC), transpose to NCHW, 1x1 conv + bn: two folds.
    first = Conv((1, 8, 8, 3), (3, 3, 3, 4), (1, 8, 8, 4), NHWC_HWIO, SAME_3X3)
    second = Conv((1, 4, 8, 8), (4, 4, 1, 1), (1, 4, 8, 8), NCHW_OIHW, "stride = [1, 1]")
    biased = b.bias("biased", first.emit(b, "conv1", "%x"), first.y, 3)
    act = b.relu("relu", b.batch_norm("bn1", biased, first.y, 3, 1e-5), first.y)
    b.op(f"%nchw = stablehlo.transpose {act}, dims = [0, 3, 1, 2] : "
         f"({b.type(first.y)}) -> {b.type(second.x)}")
    bn2 = b.batch_norm("bn2", second.emit(b, "conv2", "%nchw"), second.y, 1, 1e-3)
    return b.function([("%x", first.x)], [(bn2, second.y)])


def _dense(b: Builder, name: str, x: str, shape: tuple[int, int], out: int, bias: bool) -> str:
    """`%name = x . W [+ b]`, x of `shape` [T, D], W [D, out] with random constants."""
    w = b.kernel(f"{name}_w", (shape[1], out), shape[1])
    y = (shape[0], out)
    b.op(f"%{name}_mm = stablehlo.dot_general {x}, {w}, contracting_dims = [1] x [0] : "
         f"({b.type(shape)}, {b.type((shape[1], out))}) -> {b.type(y)}")
    return b.bias(name, f"%{name}_mm", y, 1) if bias else f"%{name}_mm"


def _row_statistic(b: Builder, name: str, x: str, shape: tuple[int, int], square: bool) -> str:
    """`%name`: the mean over the feature axis of x (of x * x with `square`), broadcast back
    to `shape`, as Flax's LayerNorm and RMSNorm compute it."""
    t, d = shape
    full, row = b.type(shape), b.type((t,))
    scalar = f"tensor<{b.element}>"
    if square:
        b.op(f"%{name}_sq = stablehlo.multiply {x}, {x} : {full}")
        x = f"%{name}_sq"
    b.op(f"%{name}_zero = stablehlo.constant dense<0.0> : {scalar}")
    b.op(f"%{name}_sum = stablehlo.reduce({x} init: %{name}_zero) applies stablehlo.add "
         f"across dimensions = [1] : ({full}, {scalar}) -> {row}")
    b.op(f"%{name}_n = stablehlo.constant dense<{float(d)}> : {row}")
    b.op(f"%{name}_mean = stablehlo.divide %{name}_sum, %{name}_n : {row}")
    b.op(f"%{name} = stablehlo.broadcast_in_dim %{name}_mean, dims = [0] : ({row}) -> {full}")
    return f"%{name}"


def _per_feature(b: Builder, name: str, op: str, x: str, shape: tuple[int, int], low: float, high: float) -> str:
    """`%name = x <op> broadcast_in_dim(v)` with v a random per-feature vector."""
    v = b.vector(f"{name}_v", shape[1], low, high)
    b.op(f"%{name}_b = stablehlo.broadcast_in_dim {v}, dims = [1] : "
         f"({b.type((shape[1],))}) -> {b.type(shape)}")
    b.op(f"%{name} = stablehlo.{op} {x}, %{name}_b : {b.type(shape)}")
    return f"%{name}"


def _normalized(b: Builder, x: str, shape: tuple[int, int], rms: bool) -> str:
    """(x - mean) * rsqrt(var + eps) (LayerNorm) or x * rsqrt(mean(x * x) + eps) (RMSNorm):
    per token, not per feature, so it stays."""
    full = b.type(shape)
    if not rms:
        mean = _row_statistic(b, "mu", x, shape, square=False)
        b.op(f"%centred = stablehlo.subtract {x}, {mean} : {full}")
        x = "%centred"
    var = _row_statistic(b, "var", x, shape, square=True)
    b.op(f"%eps = stablehlo.constant dense<1.0e-06> : {full}")
    b.op(f"%var_eps = stablehlo.add {var}, %eps : {full}")
    b.op(f"%inv = stablehlo.rsqrt %var_eps : {full}")
    b.op(f"%normalized = stablehlo.multiply {x}, %inv : {full}")
    return "%normalized"


def layer_norm_qkv(b: Builder) -> str:
    # A pre-norm transformer block's attention input: LayerNorm (per-token statistics, then
    # x * gamma + beta) read by separate Q, K and V projections with biases.
    x = (6, 8)
    n = _normalized(b, "%x", x, rms=False)
    y = _per_feature(b, "gamma", "multiply", n, x, 0.5, 1.5)
    y = _per_feature(b, "beta", "add", y, x, -0.3, 0.3)
    q, k, v = (_dense(b, name, y, x, 8, bias=True) for name in ("q", "k", "v"))
    return b.function([("%x", x)], [(q, x), (k, x), (v, x)])


def rms_norm_swiglu(b: Builder) -> str:
    # A LLaMA MLP: RMSNorm (x * gamma after per-token scaling) read by the gate and up
    # projections (no biases), silu(gate) * up, then the down projection.
    x, hidden = (6, 8), (6, 16)
    n = _normalized(b, "%x", x, rms=True)
    y = _per_feature(b, "gamma", "multiply", n, x, 0.5, 1.5)
    gate = _dense(b, "gate", y, x, 16, bias=False)
    up = _dense(b, "up", y, x, 16, bias=False)
    full = b.type(hidden)
    b.op(f"%sigmoid = stablehlo.logistic {gate} : {full}")
    b.op(f"%silu = stablehlo.multiply {gate}, %sigmoid : {full}")
    b.op(f"%glu = stablehlo.multiply %silu, {up} : {full}")
    down = _dense(b, "down", "%glu", hidden, 8, bias=False)
    return b.function([("%x", x)], [(down, x)])


def bn_two_branches(b: Builder) -> str:
    # A batch norm (no activation after it) read by two 1x1 convolution branches, each with
    # its own bias add: it folds into both kernels and both biases.
    first = Conv((1, 6, 6, 8), (1, 1, 8, 4), (1, 6, 6, 4), NHWC_HWIO, "stride = [1, 1]")
    second = Conv((1, 6, 6, 8), (1, 1, 8, 6), (1, 6, 6, 6), NHWC_HWIO, "stride = [1, 1]")
    bn = b.batch_norm("bn", "%x", first.x, 3, 1e-5)
    a = b.bias("a", first.emit(b, "conv_a", bn), first.y, 3)
    c = b.bias("c", second.emit(b, "conv_c", bn), second.y, 3)
    return b.function([("%x", first.x)], [(a, first.y), (c, second.y)])


def multi_user(b: Builder) -> str:
    # The first batch norm folds. The second convolution's result is also returned, so
    # folding its batch norm would change that result: it must stay.
    conv = Conv((1, 6, 6, 4), (3, 3, 4, 4), (1, 6, 6, 4), NHWC_HWIO, SAME_3X3)
    bn1 = b.batch_norm("bn1", conv.emit(b, "conv1", "%x"), conv.y, 3, 1e-5)
    conv2 = conv.emit(b, "conv2", b.relu("relu", bn1, conv.y))
    bn2 = b.batch_norm("bn2", conv2, conv.y, 3, 1e-5)
    return b.function([("%x", conv.x)], [(bn2, conv.y), (conv2, conv.y)])


def torch_mlir_dynamic_batch(b: Builder) -> str:
    # Two NCHW conv + batch norm blocks with a symbolic batch, in the form torch-mlir's
    # TorchToStablehlo gives a decomposed batch norm (aten.sub / mul / mul / add.Tensor
    # lowered to CHLO broadcasting ops, then chlo-legalize-to-stablehlo, canonicalize,
    # cse): per step, shape.shape_of of the activation, shape.broadcast with the
    # parameter's constant shape [C, 1, 1], and a dynamic_broadcast_in_dim of each operand
    # onto it. Per-channel math (rsqrt(var + eps)) runs on [C] vectors, then unsqueezes to
    # [C, 1, 1] with a reshape.
    blocks = [((2, 3, 8, 8), (4, 3, 3, 3), 4), ((2, 4, 8, 8), (6, 4, 1, 1), 6)]
    value, steps = "%x", 0

    def dyn(shape):
        return b.type(("?", *shape[1:]))

    for index, (x, k, channels) in enumerate(blocks):
        y = (x[0], channels, x[2], x[3])
        pad = "pad = [[1, 1], [1, 1]]" if k[2] == 3 else "pad = [[0, 0], [0, 0]]"
        kernel = b.kernel(f"k{index}", k, int(np.prod(k[1:])))
        b.op(f"%conv{index} = stablehlo.convolution({value}, {kernel}) dim_numbers = "
             f"{NCHW_OIHW}, window = {{stride = [1, 1], {pad}}} {{batch_group_count = 1 : "
             f"i64, feature_group_count = 1 : i64}} : ({dyn(x)}, {b.type(k)}) -> {dyn(y)}")
        vec, col = b.type((channels,)), b.type((channels, 1, 1))
        mean = b.vector(f"mean{index}", channels, -0.3, 0.3)
        var = b.vector(f"var{index}", channels, 0.5, 2.0)
        eps = b.constant(f"eps{index}", np.full(channels, 1e-5))
        weight = b.vector(f"weight{index}", channels, 0.5, 1.5)
        bias = b.vector(f"bias{index}", channels, -0.2, 0.2)
        b.op(f"%ve{index} = stablehlo.add {var}, {eps} : {vec}")
        b.op(f"%invstd{index} = stablehlo.rsqrt %ve{index} : {vec}")
        params = []
        for name, vector in (("mean", mean), ("invstd", f"%invstd{index}"), ("weight", weight),
                             ("bias", bias)):
            b.op(f"%{name}{index}_c = stablehlo.reshape {vector} : ({vec}) -> {col}")
            params.append(f"%{name}{index}_c")
        b.op(f"%cshape{index} = shape.const_shape [{channels}, 1, 1] : tensor<3xindex>")
        value = f"%conv{index}"
        for op, param in zip(("subtract", "multiply", "multiply", "add"), params):
            s = f"%s{steps}"
            b.op(f"{s} = shape.shape_of {value} : {dyn(y)} -> tensor<4xindex>")
            b.op(f"{s}b = shape.broadcast {s}, %cshape{index} : tensor<4xindex>, "
                 f"tensor<3xindex> -> tensor<4xindex>")
            b.op(f"{s}l = stablehlo.dynamic_broadcast_in_dim {value}, {s}b, dims = "
                 f"[0, 1, 2, 3] : ({dyn(y)}, tensor<4xindex>) -> {dyn(y)}")
            b.op(f"{s}r = stablehlo.dynamic_broadcast_in_dim {param}, {s}b, dims = "
                 f"[1, 2, 3] : ({col}, tensor<4xindex>) -> {dyn(y)}")
            b.op(f"%bn{steps} = stablehlo.{op} {s}l, {s}r : {dyn(y)}")
            value, steps = f"%bn{steps}", steps + 1
        if index == 0:
            b.op(f"%zero = stablehlo.constant dense<0.0> : tensor<{b.element}>")
            b.op(f"%zeros = stablehlo.broadcast_in_dim %zero, dims = [] : "
                 f"(tensor<{b.element}>) -> {b.type((1, 1, 1, 1))}")
            b.op(f"%zs = shape.shape_of {value} : {dyn(y)} -> tensor<4xindex>")
            b.op(f"%zb = stablehlo.dynamic_broadcast_in_dim %zeros, %zs, dims = [0, 1, 2, 3] : "
                 f"({b.type((1, 1, 1, 1))}, tensor<4xindex>) -> {dyn(y)}")
            b.op(f"%relu = stablehlo.maximum {value}, %zb : {dyn(y)}")
            value = "%relu"
    return b.function([("%x", ("?", *blocks[0][0][1:]))], [(value, ("?", 6, 8, 8))])


CASES = (
    Case(
        "handwritten_nhwc_hwio_f32",
        "2-D convolution, NHWC input x HWIO kernel, then batch_norm_inference over the "
        "output features (dimension 3)",
        1,
        conv_bn(Conv((2, 8, 8, 4), (3, 3, 4, 8), (2, 8, 8, 8), NHWC_HWIO, SAME_3X3), 1e-5),
    ),
    Case(
        "handwritten_nchw_oihw_f64",
        "2-D convolution, NCHW x OIHW, stride 2 and padding, then batch_norm_inference over "
        "dimension 1, in f64",
        2,
        conv_bn(
            Conv((2, 3, 9, 9), (6, 3, 3, 3), (2, 6, 5, 5), NCHW_OIHW,
                 "stride = [2, 2], pad = [[1, 1], [1, 1]]"),
            1e-3,
        ),
    ),
    Case(
        "handwritten_depthwise_f32",
        "depthwise convolution (feature_group_count = 4 input channels, 2 outputs per "
        "channel), then batch_norm_inference",
        3,
        conv_bn(
            Conv((1, 8, 8, 4), (3, 3, 1, 8), (1, 8, 8, 8), NHWC_HWIO, SAME_3X3,
                 feature_groups=4),
            1e-5,
        ),
    ),
    Case(
        "handwritten_conv_transpose_grouped_f32",
        "a stride-2 transposed convolution as frameworks lower it: lhs dilation 2, window "
        "reversal, feature_group_count 2, and the kernel stored [i, o, 0, 1] (PyTorch's "
        "ConvTranspose2d order), so the output feature is not the kernel's leading dimension",
        4,
        conv_bn(
            Conv((1, 4, 5, 5), (2, 6, 3, 3), (1, 6, 10, 10),
                 "[b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1]",
                 "stride = [1, 1], pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2], "
                 "rhs_dilate = [1, 1], reverse = [true, true]", feature_groups=2),
            1e-5,
        ),
    ),
    Case(
        "handwritten_batch_group_f32",
        "convolution with batch_group_count 2 (the weight-gradient form: output features 0-1 "
        "read batch group 0, features 2-3 group 1), then batch_norm_inference",
        5,
        conv_bn(
            Conv((4, 6, 6, 3), (3, 3, 3, 4), (2, 4, 4, 4), NHWC_HWIO, "stride = [1, 1]",
                 batch_groups=2),
            1e-5,
        ),
    ),
    Case(
        "handwritten_conv3d_ndhwc_f32",
        "3-D convolution, NDHWC x DHWIO, then batch_norm_inference over dimension 4",
        6,
        conv_bn(
            Conv((1, 5, 6, 6, 3), (3, 3, 3, 3, 4), (1, 5, 6, 6, 4),
                 "[b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f]",
                 "stride = [1, 1, 1], pad = [[1, 1], [1, 1], [1, 1]]"),
            1e-5,
        ),
    ),
    Case(
        "handwritten_conv1d_f16",
        "1-D convolution, NCW x OIW, then batch_norm_inference over dimension 1, in f16",
        7,
        conv_bn(
            Conv((2, 4, 16), (8, 4, 3), (2, 8, 16), "[b, f, 0]x[o, i, 0]->[b, f, 0]",
                 "stride = [1], pad = [[1, 1]]"),
            1e-3,
        ),
    ),
    Case(
        "handwritten_conv_bias_bf16",
        "2-D convolution + per-channel bias (broadcast_in_dim + add), then "
        "batch_norm_inference, in bf16: MLIR prints the 288-value folded kernel as hex and "
        "the 8-value vectors as decimals, so both of the bf16 reader's paths run",
        8,
        conv_bn(Conv((1, 8, 8, 4), (3, 3, 4, 8), (1, 8, 8, 8), NHWC_HWIO, SAME_3X3), 1e-3,
                bias=True),
    ),
    Case(
        "handwritten_dense_f32",
        "two dense layers as dot_general: weights on the right with a bias (feature = result "
        "dim 1), then weights on the left (feature = result dim 0)",
        9,
        dense,
    ),
    Case(
        "handwritten_two_blocks_f32",
        "two conv + batch-norm pairs: NHWC conv + bias + bn + relu, transpose, NCHW 1x1 conv "
        "+ bn",
        10,
        two_blocks,
    ),
    Case(
        "handwritten_multi_user_f32",
        "a foldable conv + bn, then a conv whose result is also returned: that batch norm "
        "must not fold",
        11,
        multi_user,
        batch_norms_left=1,
        skips=("producer result has other users",),
    ),
    Case(
        "input_bn_dense_f32",
        "batch_norm_inference before a dense layer (a BNNeck before the classifier): folded "
        "into the dot_general as W * s and a bias W . t",
        12,
        bn_dense,
    ),
    Case(
        "input_bn_valid_conv_grouped_f32",
        "batch_norm_inference before a VALID stride-2 convolution with feature_group_count 2, "
        "NHWC x HWIO: scale and shift both fold, group by group",
        13,
        bn_conv(Conv((2, 9, 9, 4), (3, 3, 2, 6), (2, 4, 4, 6), NHWC_HWIO, "stride = [2, 2]",
                     feature_groups=2), 1e-5),
    ),
    Case(
        "input_bn_valid_depthwise_nchw_f64",
        "batch_norm_inference before a VALID depthwise convolution, NCHW x OIHW, in f64",
        14,
        bn_conv(Conv((1, 3, 6, 6), (6, 1, 3, 3), (1, 6, 4, 4), NCHW_OIHW, "stride = [1, 1]",
                     feature_groups=3), 1e-3),
    ),
    Case(
        "input_bn_valid_conv_grouped_nchw_f64",
        "batch_norm_inference before a VALID convolution with feature_group_count 3, NCHW x "
        "OIHW (the kernel's input-feature axis after its output axis), in f64",
        18,
        bn_conv(Conv((2, 6, 7, 7), (9, 2, 3, 3), (2, 9, 5, 5), NCHW_OIHW, "stride = [1, 1]",
                     feature_groups=3), 1e-3),
    ),
    Case(
        "input_bn_valid_conv_grouped_ohwi_f32",
        "batch_norm_inference before a VALID convolution with feature_group_count 2, NHWC x "
        "OHWI",
        19,
        bn_conv(Conv((1, 6, 6, 6), (4, 3, 3, 3), (1, 4, 4, 4), OHWI, "stride = [1, 1]",
                     feature_groups=2), 1e-5),
    ),
    Case(
        "input_bn_valid_depthwise_multiplier_f32",
        "batch_norm_inference before a VALID depthwise convolution with channel multiplier 2 "
        "(4 groups of 1 input, 2 outputs each), NHWC x HWIO: the result (1x6x6x8) is larger "
        "than the input (1x8x8x4), so the scale folds group by group and x + t/s stays",
        20,
        bn_conv(Conv((1, 8, 8, 4), (3, 3, 1, 8), (1, 6, 6, 8), NHWC_HWIO, "stride = [1, 1]",
                     feature_groups=4), 1e-5),
        skips=("folding would move an add onto a larger tensor",),
    ),
    Case(
        "input_bn_valid_depthwise_stride2_f64",
        "batch_norm_inference before a VALID stride-2 depthwise convolution, NHWC x HWIO, in "
        "f64",
        21,
        bn_conv(Conv((1, 9, 9, 3), (3, 3, 1, 3), (1, 4, 4, 3), NHWC_HWIO, "stride = [2, 2]",
                     feature_groups=3), 1e-3),
    ),
    Case(
        "input_bn_padded_conv_grouped_f32",
        "batch_norm_inference before a SAME-padded convolution with feature_group_count 2: the "
        "scale folds into the kernel group by group, the shift moves before it and stays",
        22,
        bn_conv(Conv((1, 6, 6, 4), (3, 3, 2, 6), (1, 6, 6, 6), NHWC_HWIO, SAME_3X3,
                     feature_groups=2), 1e-5),
        skips=("convolution pads or dilates its input: the shift cannot pass its zeros",),
    ),
    Case(
        "input_bn_batch_group_f32",
        "batch_norm_inference before a VALID convolution with batch_group_count 2",
        15,
        bn_conv(Conv((4, 6, 6, 3), (3, 3, 3, 4), (2, 4, 4, 4), NHWC_HWIO, "stride = [1, 1]",
                     batch_groups=2), 1e-5),
    ),
    Case(
        "input_bn_padded_conv_f32",
        "batch_norm_inference before a SAME-padded convolution: the scale folds into the "
        "kernel, the shift moves before it (x + t / s) and stays, since zero padding would "
        "pad with 0 instead of t",
        16,
        bn_conv(Conv((1, 8, 8, 4), (3, 3, 4, 8), (1, 8, 8, 8), NHWC_HWIO, SAME_3X3), 1e-5),
        skips=("convolution pads or dilates its input: the shift cannot pass its zeros",),
    ),
    Case(
        "input_bn_two_branches_f32",
        "batch_norm_inference read by two 1x1 convolution branches, each with its own bias "
        "add: folded into both kernels and both biases",
        18,
        bn_two_branches,
    ),
    Case(
        "input_layer_norm_qkv_f32",
        "LayerNorm (per-token mean and variance, then x * gamma + beta) before separate Q, K "
        "and V projections with biases: gamma and beta fold into each projection",
        19,
        layer_norm_qkv,
        folds=1,
    ),
    Case(
        "input_rms_norm_swiglu_f32",
        "RMSNorm (x * gamma after per-token scaling) before LLaMA's gate and up projections, "
        "silu(gate) * up, down projection: gamma folds into both",
        20,
        rms_norm_swiglu,
        folds=1,
    ),
    Case(
        "input_bn_transposed_conv_f32",
        "batch_norm_inference before a transposed convolution (lhs dilation 2, no padding): "
        "the dilation inserts zeros, so only the scale folds",
        17,
        bn_conv(Conv((1, 4, 5, 5), (6, 4, 3, 3), (1, 6, 7, 7), NCHW_OIHW,
                     "stride = [1, 1], lhs_dilate = [2, 2]"), 1e-5),
        skips=("convolution pads or dilates its input: the shift cannot pass its zeros",),
    ),
    Case(
        "torch_mlir_dynamic_batch_f32",
        "torch-mlir's form of a decomposed batch norm with a symbolic batch (hand-written "
        "after TorchToStablehlo's lowering of aten.sub/mul/add.Tensor to CHLO broadcasting "
        "ops and the torch-backend-to-stablehlo-backend pipeline's chlo-legalize-to-stablehlo, "
        "canonicalize, cse): two NCHW conv + batch norm blocks, each step reading the "
        "activation's shape with shape.shape_of and broadcasting it onto its own shape; the "
        "runner sets the batch to 2 before XLA runs it",
        18,
        torch_mlir_dynamic_batch,
        folds=8,
    ),
)


def render(case: Case) -> str:
    """The file text of `case`: header, then the module."""
    element = case.name.rsplit("_", 1)[1]
    body = case.build(Builder(case.seed, element))
    covers = textwrap.wrap(f"{case.name}: {case.covers}.", 92)
    header = [
        *(f"// {line}" for line in covers),
        f"// Produced by: {COMMAND} (constants from numpy.random.default_rng({case.seed})).",
        f"// EXPECT-BATCH-NORMS-LEFT: {case.batch_norms_left}",
        *(f"// EXPECT-SKIP: {reason}" for reason in case.skips),
        *([f"// EXPECT-FOLDS: {case.folds}"] if case.folds is not None else []),
    ]
    return "\n".join(header) + "\n" + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale files, write none")
    args = parser.parse_args(argv)
    stale = []
    for case in CASES:
        path = HERE / f"{case.name}.mlir"
        text = render(case)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.write_text(text)
    if stale:
        print(f"generate.py: stale: {', '.join(stale)}; run {COMMAND}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
