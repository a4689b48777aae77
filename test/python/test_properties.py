"""Property tests: generated convolution + batch norm modules, folded by the API.

Hypothesis draws the structure of a module (1 to 3 spatial dimensions; a random
permutation of the input, kernel and output dimension numbers; plain, grouped, depthwise
and batch-grouped convolutions; strides, padding (also negative), lhs and rhs dilation,
window reversal; f16, bf16, f32, f64; with or without a per-channel bias add, on either
side of the add; the batch norm as `batch_norm_inference` or decomposed as Flax, Equinox
or torch-mlir write it (`FORMS`); the weights, bias and batch-norm values as constants or
as arguments of `@main` (`PARAMS`); one layer, or a chain of up to three) and a seed for
numpy, which draws every value. The shapes follow from StableHLO's convolution shape
rules, computed here; the parser's verifier checks them.

Invariants:
- (a) the folded module computes the same function: XLA on the CPU, seeded inputs (and the
  drawn values, for arguments), `helpers.TOLERANCE` per element type and layer (see
  `assert_folds_to_the_same_function`);
- (b) folding is idempotent: folding the folded text gives the same text;
- (c) every batch norm after a convolution is folded, and the report says so: the
  activation path keeps one convolution and one bias add per layer, no batch norm and no
  step of a decomposed one, for constants and arguments alike;
- (d) an unsafe variant (the convolution has a second user, variance + epsilon <= 0, NaN
  in scale, weights that would overflow f16) of `batch_norm_inference` comes back exactly
  as MLIR prints the input, with the reason in the report; a decomposed one keeps its
  unsafe step, with the reason. Only the second user applies to arguments;
- (f) input side: a batch norm, x * s + t or x * (r * s) + t read by 1 to 3 convolutions, values as
  constants or as arguments, folds into every one of them (or leaves one add x + t / s
  that all of them read, with the reason) and computes the same outputs;
- (e) the folded module round-trips through MLIR bytecode and StableHLO portable artifacts
  (the oldest and the current version), and folding either of those gives the same module
  as folding the text.

CI runs the `ci` profile from conftest.py (few examples, derandomized). For a long run:

    HYPOTHESIS_PROFILE=long python3 -m pytest -q test/python/test_properties.py
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, replace

import ml_dtypes
import numpy as np
import pytest
from helpers import DTYPES, LARGER, TOLERANCE, count_batch_norms, main_input_types, run_on_cpu
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

import stablehlo_bnfold

PROFILE = settings()  # the profile conftest.py loaded


def examples(ci: int) -> settings:
    """`ci` examples under the `ci` profile; the loaded profile's count under any other
    (`long` runs >= 1000 per test)."""
    if PROFILE.max_examples >= 1000:
        return settings(PROFILE)
    return settings(PROFILE, max_examples=ci)




@dataclass(frozen=True)
class Conv:
    """A convolution followed (through an optional bias add) by a batch norm.

    Layouts name what each dimension holds, position by position: the input's
    `b`, `f` and spatial `0`, `1`, ...; the kernel's `o`, `i` and spatial; the output's
    `b`, `f` and spatial, exactly as the convolution's pretty form prints them.
    """

    element: str
    input_layout: tuple[str, ...]
    kernel_layout: tuple[str, ...]
    output_layout: tuple[str, ...]
    batch: int
    in_features: int
    out_features: int
    feature_groups: int
    batch_groups: int
    input_spatial: tuple[int, ...]
    kernel_spatial: tuple[int, ...]
    stride: tuple[int, ...]
    pad: tuple[tuple[int, int], ...]
    lhs_dilate: tuple[int, ...]
    rhs_dilate: tuple[int, ...]
    reverse: tuple[bool, ...]
    bias: str | None  # None, "after" (conv + bias) or "before" (bias + conv)
    epsilon: float
    seed: int
    form: str = "batch_norm_inference"  # one of FORMS: how the batch norm is written
    params: str = "constants"  # "constants", or "arguments" of @main (see PARAMS)

    @property
    def dtype(self) -> np.dtype:
        return DTYPES[self.element]

    @property
    def spatial(self) -> int:
        return len(self.input_spatial)

    @property
    def output_spatial(self) -> tuple[int, ...]:
        """StableHLO's convolution output size per spatial dimension."""
        sizes = []
        for n, k, s, (lo, hi), ld, rd in zip(
            self.input_spatial, self.kernel_spatial, self.stride, self.pad,
            self.lhs_dilate, self.rhs_dilate,
        ):
            padded = (n - 1) * ld + 1 + lo + hi
            window = (k - 1) * rd + 1
            sizes.append((padded - window) // s + 1)
        return tuple(sizes)

    def _shape(self, layout: tuple[str, ...], sizes: dict[str, int]) -> tuple[int, ...]:
        return tuple(sizes[label] for label in layout)

    @property
    def input_shape(self) -> tuple[int, ...]:
        sizes = {"b": self.batch, "f": self.in_features}
        sizes.update({str(d): n for d, n in enumerate(self.input_spatial)})
        return self._shape(self.input_layout, sizes)

    @property
    def kernel_shape(self) -> tuple[int, ...]:
        sizes = {"o": self.out_features, "i": self.in_features // self.feature_groups}
        sizes.update({str(d): n for d, n in enumerate(self.kernel_spatial)})
        return self._shape(self.kernel_layout, sizes)

    @property
    def output_shape(self) -> tuple[int, ...]:
        sizes = {"b": self.batch // self.batch_groups, "f": self.out_features}
        sizes.update({str(d): n for d, n in enumerate(self.output_spatial)})
        return self._shape(self.output_layout, sizes)

    @property
    def feature_index(self) -> int:
        return self.output_layout.index("f")

    @property
    def kernel_output_axis(self) -> int:
        return self.kernel_layout.index("o")


@dataclass(frozen=True)
class Stats:
    """The module's constants, in float64 before rounding to the element type."""

    kernel: np.ndarray
    bias: np.ndarray
    scale: np.ndarray
    offset: np.ndarray
    mean: np.ndarray
    variance: np.ndarray


def draw_stats(conv: Conv) -> Stats:
    """He-scaled weights and typical trained batch-norm statistics, from `conv.seed`."""
    rng = np.random.default_rng(conv.seed)
    fan_in = (conv.in_features // conv.feature_groups) * int(np.prod(conv.kernel_spatial))
    c = conv.out_features
    return Stats(
        kernel=rng.standard_normal(conv.kernel_shape) / np.sqrt(fan_in),
        bias=rng.normal(0.0, 0.2, c),
        scale=rng.uniform(0.5, 1.5, c) * rng.choice([-1.0, 1.0], c),
        offset=rng.normal(0.0, 0.2, c),
        mean=rng.normal(0.0, 0.2, c),
        variance=rng.uniform(0.3, 2.0, c),
    )


def _tensor(shape: tuple[int, ...], element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def _ints(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _constant(name: str, values: np.ndarray, element: str) -> str:
    """A constant holding `values` rounded once to the element type, written exactly: 1-D
    as float64 decimals (every f16, bf16 and f32 value is one) or, for NaN and infinities,
    their bits in hex; anything else as raw hex bytes."""
    values = np.asarray(values, dtype=np.float64).astype(DTYPES[element])
    if values.ndim == 1:
        bits = values.view(f"u{values.dtype.itemsize}")
        body = "[" + ", ".join(
            repr(float(v)) if np.isfinite(v) else f"0x{int(b):0{2 * values.dtype.itemsize}X}"
            for v, b in zip(values, bits)
        ) + "]"
    else:
        raw = values.view(np.uint16) if element == "bf16" else values
        body = '"0x' + raw.astype(raw.dtype.newbyteorder("<")).tobytes().hex().upper() + '"'
    return f"  %{name} = stablehlo.constant dense<{body}> : {_tensor(values.shape, element)}"


FORMS = ("batch_norm_inference", "flax", "equinox", "torch_mlir")
"""How a layer writes its batch norm: the op, or the decomposed forms of
test/transforms/decomposed.mlir (each activation-sized op is one step of the form)

- flax: (y - mean) * (rsqrt(var + eps) * scale) + offset, per-channel values reshaped from
  C to 1x..xCx..x1 and broadcast with an identity `dims`, eps a scalar broadcast with
  `dims = []`;
- equinox: (y - mean) / sqrt(var + eps) * scale + offset, after an identity reshape pair
  (y flattened and reshaped back, as `vmap` leaves it), values broadcast from C;
- torch_mlir: ((y - mean) * (1 / sqrt(var + eps))) * scale + offset, eps an f64
  `arith.constant` converted to the element type."""

PARAMS = ("constants", "arguments")
"""Where a layer's weights, bias and batch-norm values live: `stablehlo.constant`s, or
arguments of `@main` after `x` (what `jax.export` of `model.apply(variables, x)` gives;
folded in the graph by default)."""


@dataclass(frozen=True)
class Module:
    """A generated module: its text and, in order, the values of `@main`'s arguments after
    `x` (the parameters of layers whose `params` is "arguments")."""

    text: str
    parameters: tuple[np.ndarray, ...]


def _convolution(conv: Conv, result: str, x: str, kernel: str, element: str) -> str:
    """The line `result = stablehlo.convolution(x, kernel)` of `conv`, in `element`."""
    xt, kt, yt = (_tensor(s, element) for s in (conv.input_shape, conv.kernel_shape, conv.output_shape))
    window = (
        f"stride = {_ints(conv.stride)}, "
        f"pad = [{', '.join(_ints(p) for p in conv.pad)}], "
        f"lhs_dilate = {_ints(conv.lhs_dilate)}, rhs_dilate = {_ints(conv.rhs_dilate)}, "
        f"reverse = [{', '.join('true' if r else 'false' for r in conv.reverse)}]"
    )
    dims = (
        f"[{', '.join(conv.input_layout)}]x[{', '.join(conv.kernel_layout)}]"
        f"->[{', '.join(conv.output_layout)}]"
    )
    return (
        f"  {result} = stablehlo.convolution({x}, {kernel}) dim_numbers = {dims}, "
        f"window = {{{window}}} {{batch_group_count = {conv.batch_groups} : i64, "
        f"feature_group_count = {conv.feature_groups} : i64}} : ({xt}, {kt}) -> {yt}"
    )


def _layer(
    conv: Conv, stats: Stats, x: str, n: int
) -> tuple[list[str], str, str, list[tuple[str, np.ndarray]]]:
    """The lines of layer `n`, reading value `x`: (lines, the batch norm's operand, the
    batch norm's result, the arguments it needs as (name, values)). Names end in `n`, so
    layers can be chained."""
    e = conv.element
    yt = _tensor(conv.output_shape, e)
    vector = _tensor((conv.out_features,), e)
    arguments: list[tuple[str, np.ndarray]] = []

    def parameter(name: str, values: np.ndarray) -> list[str]:
        if conv.params == "arguments":
            arguments.append((name, np.asarray(values, dtype=np.float64).astype(conv.dtype)))
            return []
        return [_constant(name, values, e)]

    lines = parameter(f"k{n}", stats.kernel) + [_convolution(conv, f"%conv{n}", x, f"%k{n}", e)]
    operand = f"%conv{n}"
    if conv.bias is not None:
        pair = f"%conv{n}, %bias{n}" if conv.bias == "after" else f"%bias{n}, %conv{n}"
        lines += parameter(f"b{n}", stats.bias) + [
            f"  %bias{n} = stablehlo.broadcast_in_dim %b{n}, dims = [{conv.feature_index}] "
            f": ({vector}) -> {yt}",
            f"  %y{n} = stablehlo.add {pair} : {yt}",
        ]
        operand = f"%y{n}"
    for name in ("scale", "offset", "mean", "variance"):
        lines += parameter(f"{name}{n}", getattr(stats, name))
    lines += _BATCH_NORM[conv.form](conv, operand, n)
    return lines, operand, f"%bn{n}", arguments


def _bn_op(conv: Conv, y: str, n: int) -> list[str]:
    e = conv.element
    yt, vector = _tensor(conv.output_shape, e), _tensor((conv.out_features,), e)
    epsilon = repr(float(np.float32(conv.epsilon)))
    return [
        f'  %bn{n} = "stablehlo.batch_norm_inference"({y}, %scale{n}, %offset{n}, '
        f"%mean{n}, %variance{n}) {{epsilon = {epsilon} : f32, "
        f"feature_index = {conv.feature_index} : i64}}"
        f" : ({yt}, {vector}, {vector}, {vector}, {vector}) -> {yt}"
    ]


def _bn_flax(conv: Conv, y: str, n: int) -> list[str]:
    e, f = conv.element, conv.feature_index
    yt, vector = _tensor(conv.output_shape, e), _tensor((conv.out_features,), e)
    rank = len(conv.output_shape)
    narrow = _tensor(tuple(conv.out_features if d == f else 1 for d in range(rank)), e)
    identity = _ints(range(rank))

    def wide(name: str, value: str) -> list[str]:  # C -> 1x..xCx..x1 -> the activation
        return [
            f"  %{name}{n}r = stablehlo.reshape %{value}{n} : ({vector}) -> {narrow}",
            f"  %{name}{n}w = stablehlo.broadcast_in_dim %{name}{n}r, dims = {identity} "
            f": ({narrow}) -> {yt}",
        ]

    return [
        *wide("m", "mean"),
        f"  %d{n} = stablehlo.subtract {y}, %m{n}w : {yt}",
        f"  %eps{n} = stablehlo.constant dense<{conv.epsilon:.8e}> : tensor<{e}>",
        f"  %eps{n}w = stablehlo.broadcast_in_dim %eps{n}, dims = [] : (tensor<{e}>) -> {narrow}",
        f"  %v{n}r = stablehlo.reshape %variance{n} : ({vector}) -> {narrow}",
        f"  %ve{n} = stablehlo.add %v{n}r, %eps{n}w : {narrow}",
        f"  %r{n} = stablehlo.rsqrt %ve{n} : {narrow}",
        f"  %s{n}r = stablehlo.reshape %scale{n} : ({vector}) -> {narrow}",
        f"  %rs{n} = stablehlo.multiply %r{n}, %s{n}r : {narrow}",
        f"  %rs{n}w = stablehlo.broadcast_in_dim %rs{n}, dims = {identity} : ({narrow}) -> {yt}",
        f"  %n{n} = stablehlo.multiply %d{n}, %rs{n}w : {yt}",
        *wide("o", "offset"),
        f"  %bn{n} = stablehlo.add %n{n}, %o{n}w : {yt}",
    ]


def _broadcast(conv: Conv, name: str, value: str) -> str:
    vector = _tensor((conv.out_features,), conv.element)
    return (
        f"  %{name} = stablehlo.broadcast_in_dim {value}, dims = [{conv.feature_index}] "
        f": ({vector}) -> {_tensor(conv.output_shape, conv.element)}"
    )


def _bn_equinox(conv: Conv, y: str, n: int) -> list[str]:
    e = conv.element
    yt, vector = _tensor(conv.output_shape, e), _tensor((conv.out_features,), e)
    flat = _tensor((int(np.prod(conv.output_shape)),), e)
    return [
        f"  %flat{n} = stablehlo.reshape {y} : ({yt}) -> {flat}",
        f"  %back{n} = stablehlo.reshape %flat{n} : ({flat}) -> {yt}",
        _broadcast(conv, f"m{n}w", f"%mean{n}"),
        f"  %d{n} = stablehlo.subtract %back{n}, %m{n}w : {yt}",
        f"  %eps{n} = stablehlo.constant dense<{conv.epsilon:.8e}> : {vector}",
        f"  %ve{n} = stablehlo.add %variance{n}, %eps{n} : {vector}",
        f"  %sd{n} = stablehlo.sqrt %ve{n} : {vector}",
        _broadcast(conv, f"sd{n}w", f"%sd{n}"),
        f"  %q{n} = stablehlo.divide %d{n}, %sd{n}w : {yt}",
        _broadcast(conv, f"s{n}w", f"%scale{n}"),
        f"  %n{n} = stablehlo.multiply %q{n}, %s{n}w : {yt}",
        _broadcast(conv, f"o{n}w", f"%offset{n}"),
        f"  %bn{n} = stablehlo.add %n{n}, %o{n}w : {yt}",
    ]


def _bn_torch_mlir(conv: Conv, y: str, n: int) -> list[str]:
    e = conv.element
    yt, vector = _tensor(conv.output_shape, e), _tensor((conv.out_features,), e)
    return [
        _broadcast(conv, f"m{n}w", f"%mean{n}"),
        f"  %d{n} = stablehlo.subtract {y}, %m{n}w : {yt}",
        f"  %eps{n}a = arith.constant dense<{conv.epsilon:.8e}> : tensor<f64>",
        f"  %eps{n}c = stablehlo.convert %eps{n}a : (tensor<f64>) -> tensor<{e}>",
        f"  %eps{n} = stablehlo.broadcast_in_dim %eps{n}c, dims = [] : (tensor<{e}>) -> {vector}",
        f"  %ve{n} = stablehlo.add %variance{n}, %eps{n} : {vector}",
        f"  %sd{n} = stablehlo.sqrt %ve{n} : {vector}",
        f"  %one{n} = stablehlo.constant dense<1.0> : {vector}",
        f"  %inv{n} = stablehlo.divide %one{n}, %sd{n} : {vector}",
        _broadcast(conv, f"inv{n}w", f"%inv{n}"),
        f"  %n{n} = stablehlo.multiply %d{n}, %inv{n}w : {yt}",
        _broadcast(conv, f"s{n}w", f"%scale{n}"),
        f"  %ns{n} = stablehlo.multiply %n{n}, %s{n}w : {yt}",
        _broadcast(conv, f"o{n}w", f"%offset{n}"),
        f"  %bn{n} = stablehlo.add %ns{n}, %o{n}w : {yt}",
    ]


_BATCH_NORM = {
    "batch_norm_inference": _bn_op,
    "flax": _bn_flax,
    "equinox": _bn_equinox,
    "torch_mlir": _bn_torch_mlir,
}


def build(
    layers: Conv | tuple[Conv, ...],
    stats: tuple[Stats, ...] | None = None,
    *,
    second_user: bool = False,
) -> Module:
    """`@main(x, parameters...)`: each layer is `batch_norm(conv(.) [+ bias])`, in the
    layer's form, and reads the previous one.

    `stats` gives each layer's values (default: `draw_stats`). With `second_user` the
    first convolution's result (or its bias add's) is returned as well.
    """
    layers = (layers,) if isinstance(layers, Conv) else layers
    stats = stats or tuple(draw_stats(conv) for conv in layers)
    lines, value, second = [], "%x", None
    arguments: list[tuple[str, np.ndarray]] = []
    for n, (conv, constants) in enumerate(zip(layers, stats, strict=True)):
        body, operand, value, needed = _layer(conv, constants, value, n)
        lines += body
        arguments += needed
        second = second or operand
    out = _tensor(layers[-1].output_shape, layers[-1].element)
    results, types = [value], [out]
    if second_user:
        results.append(second)
        types.append(_tensor(layers[0].output_shape, layers[0].element))
    lines.append(f"  return {', '.join(results)} : {', '.join(types)}")
    signature = [f"%x: {_tensor(layers[0].input_shape, layers[0].element)}"]
    element = {conv.dtype: conv.element for conv in layers}
    signature += [f"%{name}: {_tensor(v.shape, element[v.dtype])}" for name, v in arguments]
    text = "\n".join(
        [f"func.func @main({', '.join(signature)}) -> ({', '.join(types)}) {{", *lines, "}", ""]
    )
    return Module(text, tuple(v for _, v in arguments))


def module_text(
    layers: Conv | tuple[Conv, ...],
    stats: tuple[Stats, ...] | None = None,
    *,
    second_user: bool = False,
) -> str:
    """The text of `build(layers, stats, second_user=second_user)`."""
    return build(layers, stats, second_user=second_user).text


def inputs_for(module: Module, seed: int) -> list[np.ndarray]:
    """Arguments for `@main`: a standard-normal `x` from a generator seeded with `seed`,
    then the module's parameters."""
    ((shape, dtype),) = main_input_types(module.text)[:1]
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return [x, *module.parameters]


def magnitude_text(layers: tuple[Conv, ...]) -> str:
    """A float64 module that bounds, element by element, every intermediate value of
    `module_text(layers)` when run on |x|.

    Each layer computes |s| * (conv(|x|, |K|) + |bias| + |mean|) + |offset|, with
    s = scale / sqrt(variance + epsilon) and the values as the module stores them (rounded
    to its element type): a batch norm with scale |scale|, mean -|mean| and offset |offset|,
    after a bias add of |bias|. Every value the original or the folded module computes is,
    up to rounding, at most this in magnitude, whatever the form."""
    wide, stats = [], []
    for conv in layers:
        held = {
            name: np.asarray(value).astype(conv.dtype).astype(np.float64)
            for name, value in vars(draw_stats(conv)).items()
        }
        wide.append(
            replace(
                conv, element="f64", bias="after", form="batch_norm_inference", params="constants"
            )
        )
        stats.append(
            Stats(
                kernel=np.abs(held["kernel"]),
                bias=np.abs(held["bias"]) if conv.bias else np.zeros_like(held["bias"]),
                scale=np.abs(held["scale"]),
                offset=np.abs(held["offset"]),
                mean=-np.abs(held["mean"]),
                variance=held["variance"],
            )
        )
    return module_text(tuple(wide), tuple(stats))


def _divisors(n: int) -> list[int]:
    return [d for d in range(2, n + 1) if n % d == 0]


@st.composite
def convolutions(
    draw, elements=tuple(DTYPES), after: Conv | None = None, forms=FORMS, params=PARAMS
) -> Conv:
    """Any convolution StableHLO accepts within small sizes, followed by a batch norm in
    one of `forms`, its values in one of `params`; `after` fixes the input to that layer's
    output (element type, layout and shape)."""
    if after is None:
        element = draw(st.sampled_from(elements))
        spatial = draw(st.integers(1, 3))
        names = [str(d) for d in range(spatial)]
        input_layout = tuple(draw(st.permutations(["b", "f", *names])))
        batch, in_features, input_spatial = draw(st.integers(1, 4)), draw(st.integers(1, 6)), None
    else:
        element, spatial = after.element, after.spatial
        names = [str(d) for d in range(spatial)]
        input_layout = after.output_layout
        batch = after.batch // after.batch_groups
        in_features, input_spatial = after.out_features, after.output_spatial
    kernel_layout = tuple(draw(st.permutations(["o", "i", *names])))
    output_layout = tuple(draw(st.permutations(["b", "f", *names])))

    kinds = ["plain"]
    kinds += ["grouped"] if _divisors(in_features) else []
    kinds += ["depthwise"] if in_features > 1 else []
    kinds += ["batch_grouped"] if _divisors(batch) else []
    kind = draw(st.sampled_from(kinds))
    feature_groups = batch_groups = 1
    if kind == "grouped":
        feature_groups = draw(st.sampled_from(_divisors(in_features)))
        out_features = feature_groups * draw(st.integers(1, 2))
    elif kind == "depthwise":  # one input feature per group, a channel multiplier
        feature_groups = in_features
        out_features = in_features * draw(st.integers(1, 2))
    elif kind == "batch_grouped":
        batch_groups = draw(st.sampled_from(_divisors(batch)))
        out_features = batch_groups * draw(st.integers(1, 2))
    else:
        out_features = draw(st.integers(1, 5))

    kernel_spatial, sizes, stride, pad = [], [], [], []
    lhs_dilate, rhs_dilate, reverse = [], [], []
    for d in range(spatial):
        k = draw(st.integers(1, 3))
        rd = draw(st.integers(1, 2))
        lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
        window = (k - 1) * rd + 1
        if input_spatial is None:
            ld = draw(st.integers(1, 2))
            # Smallest input whose dilated, padded size still holds one window.
            smallest = max(1, -(-(window - lo - hi - 1) // ld) + 1)
            n = smallest + draw(st.integers(0, 3))
        else:
            n = input_spatial[d]
            ld = draw(st.integers(1, 2)) if n <= 6 else 1  # keep chained layers small
            hi += max(0, window - ((n - 1) * ld + 1 + lo + hi))  # pad up to one window
        kernel_spatial.append(k)
        sizes.append(n)
        stride.append(draw(st.integers(1, 2)))
        pad.append((lo, hi))
        lhs_dilate.append(ld)
        rhs_dilate.append(rd)
        reverse.append(draw(st.booleans()))

    conv = Conv(
        element=element,
        input_layout=input_layout,
        kernel_layout=kernel_layout,
        output_layout=output_layout,
        batch=batch,
        in_features=in_features,
        out_features=out_features,
        feature_groups=feature_groups,
        batch_groups=batch_groups,
        input_spatial=tuple(sizes),
        kernel_spatial=tuple(kernel_spatial),
        stride=tuple(stride),
        pad=tuple(pad),
        lhs_dilate=tuple(lhs_dilate),
        rhs_dilate=tuple(rhs_dilate),
        reverse=tuple(reverse),
        bias=draw(st.sampled_from([None, "after", "before"])),
        epsilon=draw(st.sampled_from([1e-5, 1e-3, 0.1])),
        seed=draw(st.integers(0, 2**32 - 1)),
        form=draw(st.sampled_from(forms)),
        params=draw(st.sampled_from(params)),
    )
    assume(not aborts_xla(conv))
    return conv


def aborts_xla(conv: Conv) -> bool:
    """Whether XLA on the CPU aborts the process compiling `conv` (jaxlib 0.10.2).

    XLA's ConvOperandSwapper (xla/hlo/transforms/simplifiers/conv_operand_swapper.cc)
    copies a spatial dimension it takes for a "group" dimension (lhs dilation == window
    size, stride == window size - 1, no padding, rhs dilation or reversal) unchanged into
    the swapped convolution, whose window then no longer matches its kernel, and
    algebraic_simplifier.cc:586 fails a CHECK ("Window dimensions do not match RHS
    shape"). It swaps only ungrouped convolutions, but grouped ones reach it after XLA has
    expanded their groups. The original module already aborts, so this is no fold's
    doing; such convolutions are not drawn. Smallest case:
    `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`, input 1x5x1x1, kernel 2x2x1x1,
    `window = {stride = [1, 2], pad = [[0, 0], [1, 1]], lhs_dilate = [2, 1]}`."""
    return any(
        ld == k and s == k - 1 and pad == (0, 0) and rd == 1 and not reverse
        for k, s, pad, ld, rd, reverse in zip(
            conv.kernel_spatial, conv.stride, conv.pad, conv.lhs_dilate, conv.rhs_dilate,
            conv.reverse,
        )
    )


@st.composite
def chains(
    draw, elements=tuple(DTYPES), longest: int = 3, forms=FORMS, params=PARAMS
) -> tuple[Conv, ...]:
    """1 to `longest` layers, each reading the one before."""
    layers = [draw(convolutions(elements, forms=forms, params=params))]
    for _ in range(draw(st.integers(0, longest - 1))):
        layers.append(draw(convolutions(after=layers[-1], forms=forms, params=params)))
    return tuple(layers)


def printed(text: str) -> str:
    """`text` parsed and printed by MLIR with no pass: what an unchanged module looks like."""
    with make_ir_context():
        return str(ir.Module.parse(text))


def fold(text: str) -> tuple[str, stablehlo_bnfold.FoldReport]:
    """Folded with LARGER: the drawn modules' weight arguments are larger than their
    activations, and these properties are of the folds, not of the cost rule."""
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True, options=LARGER)
    assert isinstance(folded, str)
    return folded, report


# --- (a) the same function, (c) nothing left ---------------------------------------------


FOLDS_PER_LAYER = {"batch_norm_inference": 1, "flax": 3, "equinox": 4, "torch_mlir": 4}
"""Folds the report lists for one layer of each form: one per activation-sized step (the
subtract, each multiply or divide, the final add); the identity reshape pair is removed
without a fold."""


def activation_path(text: str) -> Counter:
    """The ops of `@main` that read `x`, directly or through other ops, by name."""
    with make_ir_context():
        module = ir.Module.parse(text)
        main = next(op for op in module.body.operations if op.sym_name.value == "main")
        block = main.regions[0].blocks[0]
        reached = {block.arguments[0].get_name()}
        names: Counter = Counter()
        for op in block.operations:
            if any(operand.get_name() in reached for operand in op.operands):
                reached.update(result.get_name() for result in op.results)
                names[op.operation.name] += 1
    return names


def assert_every_batch_norm_is_folded(layers: tuple[Conv, ...], folded: str, report) -> None:
    """(c): the report folds every step of every layer and skips nothing, and what is left
    on the activation path is one convolution and at most one bias add per layer: no
    batch norm, and no step of a decomposed one (a subtract, multiply, divide or reshape),
    whether its values are constants or arguments."""
    assert report.skips == (), report.to_text()
    # A layer's own bias add is one more fold when the bias of the layer before, passed on
    # into its convolution (an input-side fold), meets it before its batch norm does.
    steps = sum(FOLDS_PER_LAYER[conv.form] for conv in layers)
    own_bias_adds = sum(conv.bias is not None for conv in layers[1:])
    assert steps <= report.folded <= steps + own_bias_adds, report.to_text()
    path = activation_path(folded)
    assert path["stablehlo.convolution"] == len(layers), path
    assert path["stablehlo.add"] <= len(layers), path
    assert set(path) <= {"stablehlo.convolution", "stablehlo.add", "func.return"}, path


def assert_folds_to_the_same_function(layers: tuple[Conv, ...], seed: int) -> None:
    """Fold `build(layers)`; every batch norm must be folded (see
    `assert_every_batch_norm_is_folded`) and, on seeded inputs (and the module's
    parameters, when they are arguments), XLA on the CPU must compute the same outputs for
    the folded module and the original.

    The tolerance is `helpers.TOLERANCE` of the element type per layer, relative to
    max(|max output|, the magnitude bound of `magnitude_text` for that element). That is
    `fold_and_compare`'s check except where an output is much smaller than the values it
    is computed from: there the rounding differences (each relative to those values) can
    exceed the tolerance relative to the output, as in a one-element output where bias,
    mean and offset nearly cancel (f16: 1e-3 out of values near 0.5)."""
    module = build(layers)
    folded, report = fold(module.text)
    assert_every_batch_norm_is_folded(layers, folded, report)

    inputs = inputs_for(module, seed)
    (expected,) = run_on_cpu(module.text, inputs)
    (actual,) = run_on_cpu(folded, inputs)
    (bound,) = run_on_cpu(magnitude_text(layers), [np.abs(inputs[0].astype(np.float64))])
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    expected, actual = expected.astype(np.float64), actual.astype(np.float64)
    assert np.all(np.isfinite(expected)) and np.all(np.isfinite(actual))
    scale = np.maximum(bound, np.max(np.abs(expected)))
    tolerance = TOLERANCE[layers[0].dtype] * len(layers)
    error = np.abs(actual - expected) / scale
    worst = np.unravel_index(np.argmax(error), error.shape)
    assert error[worst] <= tolerance, (
        f"at {worst}: original {expected[worst]}, folded {actual[worst]}, "
        f"magnitude {bound[worst]}: error {error[worst]:.3g} > {tolerance:.3g}"
    )


ONE_ELEMENT_F16 = Conv(
    element="f16", input_layout=("b", "f", "0", "1"), kernel_layout=("o", "i", "0", "1"),
    output_layout=("b", "f", "0", "1"), batch=1, in_features=1, out_features=1,
    feature_groups=1, batch_groups=1, input_spatial=(1, 1), kernel_spatial=(1, 1),
    stride=(1, 1), pad=((0, 0), (0, 0)), lhs_dilate=(1, 1), rhs_dilate=(1, 1),
    reverse=(False, False), bias=None, epsilon=1e-05, seed=0, form="batch_norm_inference",
    params="constants",
)
"""Batch 1, one feature in and out, 1x1: every tensor of the layer has one element, the
activation the shape of a reshaped parameter."""

# Flax's norm with its parameters as arguments between two layers: its scale and offset
# reach the next convolution's input through the multiply and add that apply them to the
# activation, so they read as data ("per-channel value is computed from the data") and
# the norm stayed, counted as folded whole (its subtract folded).
FLAX_ARGUMENTS_BETWEEN_LAYERS = (
    ONE_ELEMENT_F16, replace(ONE_ELEMENT_F16, form="flax", params="arguments"), ONE_ELEMENT_F16,
)

# A layer with one output feature and its weights as arguments, after a layer whose
# norm's shift the input side passes into it: the bias term dot_general(t, W * s) the
# fold builds read as an input-side chain on W (a one-element s is per feature along any
# dimension). Folding the folded module moved s onto t (its bias add of its own after the
# convolution), or refused it ("affine result has other users", without one).
ONE_OUTPUT_FEATURE_AFTER_A_SHIFT = (
    ONE_ELEMENT_F16, replace(ONE_ELEMENT_F16, params="arguments", bias="after"),
)
ONE_OUTPUT_FEATURE_AFTER_A_SHIFT_NO_BIAS = (
    ONE_ELEMENT_F16, replace(ONE_ELEMENT_F16, params="arguments"),
)


@examples(ci=60)
@given(conv=convolutions(), data_seed=st.integers(0, 2**32 - 1))
def test_folded_module_computes_what_the_original_computes(conv, data_seed):
    assert_folds_to_the_same_function((conv,), data_seed)


@examples(ci=20)
@given(layers=chains(), data_seed=st.integers(0, 2**32 - 1))
@example(layers=FLAX_ARGUMENTS_BETWEEN_LAYERS, data_seed=0)
def test_folded_chain_of_layers_computes_what_the_original_computes(layers, data_seed):
    assert_folds_to_the_same_function(layers, data_seed)


# --- (b) idempotent, (c) every foldable pair folded ---------------------------------------


@examples(ci=150)
@given(layers=chains())
@example(layers=ONE_OUTPUT_FEATURE_AFTER_A_SHIFT)
@example(layers=ONE_OUTPUT_FEATURE_AFTER_A_SHIFT_NO_BIAS)
def test_folding_folds_every_pair_and_folding_again_changes_nothing(layers):
    folded, report = fold(module_text(layers))
    assert_every_batch_norm_is_folded(layers, folded, report)
    again, second = fold(folded)
    assert again == folded
    assert second.folded == 0
    assert second.skips == ()


# --- input side: batch norm before the convolution ----------------------------------------


def _input_side_text(conv: Conv, bound: bool = False) -> str:
    """`@main(x)`: batch_norm_inference over x's features, then `conv`, constants drawn
    from `conv.seed`. With `bound`, an f64 module that bounds every value the original or
    the folded one computes, run on |x|: |K| and a batch norm of scale |scale|, mean
    -|mean| and offset |offset|."""
    rng = np.random.default_rng(conv.seed)
    fan_in = (conv.in_features // conv.feature_groups) * int(np.prod(conv.kernel_spatial))
    c = conv.in_features
    values = {
        "k": rng.standard_normal(conv.kernel_shape) / np.sqrt(fan_in),
        "scale": rng.uniform(0.5, 1.5, c) * rng.choice([-1.0, 1.0], c),
        "offset": rng.normal(0.0, 0.5, c),
        "mean": rng.normal(0.0, 0.5, c),
        "variance": rng.uniform(0.3, 2.0, c),
    }
    e = conv.element
    if bound:
        values = {k: np.asarray(v).astype(conv.dtype).astype(np.float64) for k, v in values.items()}
        values.update(k=np.abs(values["k"]), scale=np.abs(values["scale"]),
                      offset=np.abs(values["offset"]), mean=-np.abs(values["mean"]))
        e = "f64"
    xt, yt = _tensor(conv.input_shape, e), _tensor(conv.output_shape, e)
    vector = _tensor((c,), e)
    epsilon = repr(float(np.float32(conv.epsilon)))
    return "\n".join([
        f"func.func @main(%x: {xt}) -> {yt} {{",
        *(_constant(name, v, e) for name, v in values.items()),
        f'  %bn = "stablehlo.batch_norm_inference"(%x, %scale, %offset, %mean, %variance) '
        f"{{epsilon = {epsilon} : f32, feature_index = {conv.input_layout.index('f')} : i64}}"
        f" : ({xt}, {vector}, {vector}, {vector}, {vector}) -> {xt}",
        _convolution(conv, "%y", "%bn", "%k", e),
        f"  return %y : {yt}",
        "}",
        "",
    ])


@examples(ci=60)
@given(conv=convolutions(forms=("batch_norm_inference",), params=("constants",)),
       data_seed=st.integers(0, 2**32 - 1))
def test_batch_norm_before_a_convolution_folds_into_it_and_computes_the_same(conv, data_seed):
    """The input-side fold on any convolution: the batch norm is gone; where every window
    tap reads the input it is gone entirely, else its shift stays as one add before the
    convolution, with the reason; either way XLA computes the same outputs."""
    text = _input_side_text(conv)
    folded, report = fold(text)
    assert count_batch_norms(folded) == 0, report.to_text()
    assert [f.pattern for f in report.folds] == ["fold_input_affine_into_conv"], report.to_text()
    every_tap = all(lo <= 0 and hi <= 0 for lo, hi in conv.pad) and all(
        d == 1 for d in conv.lhs_dilate
    )
    path = activation_path(folded)
    # The cost rule: a bias add after a convolution whose result is larger than its input
    # would move the add onto a larger tensor, so the shift stays in front there too.
    larger = np.prod(conv.output_shape) > np.prod(conv.input_shape)
    if every_tap and not larger:
        assert report.skips == () and path["stablehlo.add"] <= 1, report.to_text()
    elif every_tap:
        assert [s.reason for s in report.skips] == [
            "folding would move an add onto a larger tensor"
        ], report.to_text()
    else:
        assert [s.reason for s in report.skips] == [
            "convolution pads or dilates its input: the shift cannot pass its zeros"
        ], report.to_text()
    assert set(path) <= {"stablehlo.convolution", "stablehlo.add", "func.return"}, path

    x = np.random.default_rng(data_seed).standard_normal(conv.input_shape).astype(conv.dtype)
    (expected,) = run_on_cpu(text, [x])
    (actual,) = run_on_cpu(folded, [x])
    (bound,) = run_on_cpu(_input_side_text(conv, bound=True), [np.abs(x.astype(np.float64))])
    expected, actual = expected.astype(np.float64), actual.astype(np.float64)
    # Outputs that read only padding are 0 in both, with a bound of 0.
    scale = np.maximum(np.maximum(bound, np.max(np.abs(expected))), np.finfo(np.float64).tiny)
    error = np.max(np.abs(actual - expected) / scale)
    assert error <= TOLERANCE[conv.dtype], f"error {error:.3g} > {TOLERANCE[conv.dtype]:.3g}"


# --- input side: several linear consumers, weights as arguments ---------------------------


@dataclass(frozen=True)
class Consumers:
    """A per-feature affine map over `@main`'s x read by `count` convolutions of the shape
    of `conv` (each its own kernel, drawn from `conv.seed + i`; consumer i adds its own
    bias when `own_bias[i]`). `form` is a `batch_norm_inference` (constant statistics),
    `x * s + t`, or `x * (r * s) + t` with r a constant that varies per position (Flax's
    LayerNorm: the scale split off the product); with `params` "arguments" the kernels,
    biases, s and t are arguments of `@main` after x (a batch norm's statistics and r stay
    constants)."""

    conv: Conv
    count: int
    own_bias: tuple[bool, ...]
    form: str
    params: str


@st.composite
def consumers(draw) -> Consumers:
    params = draw(st.sampled_from(PARAMS))
    conv = draw(convolutions(elements=("f32", "f64"), forms=("batch_norm_inference",), params=("constants",)))
    if params == "arguments":
        # In the graph the scale cannot be laid over a grouped kernel, and the shift that
        # stays before a padded one needs constants (both refused, with the reason).
        assume(conv.feature_groups == 1 and _reads_every_tap(conv))
    count = draw(st.integers(1, 3))
    own_bias = tuple(draw(st.booleans()) for _ in range(count))
    form = draw(st.sampled_from(("batch_norm_inference", "scale_shift", "split")))
    return Consumers(conv, count, own_bias, form, params)


def _reads_every_tap(conv: Conv) -> bool:
    return all(lo <= 0 and hi <= 0 for lo, hi in conv.pad) and all(d == 1 for d in conv.lhs_dilate)


def _consumers_text(case: Consumers, bound: bool = False) -> tuple[str, list[np.ndarray]]:
    """(text, values of the arguments after x). With `bound`: the f64 module of |values|
    (a batch norm of scale |scale|, mean -|mean| and offset |offset|) that, run on |x|,
    bounds every value the original or the folded one computes."""
    conv = case.conv
    rng = np.random.default_rng(conv.seed)
    c = conv.in_features
    affine = {
        "scale": rng.uniform(0.5, 1.5, c) * rng.choice([-1.0, 1.0], c),
        "offset": rng.normal(0.0, 0.5, c),
        "mean": rng.normal(0.0, 0.5, c),
        "variance": rng.uniform(0.3, 2.0, c),
    }
    fan_in = (c // conv.feature_groups) * int(np.prod(conv.kernel_spatial))
    kernels = [np.random.default_rng(conv.seed + i).standard_normal(conv.kernel_shape) / np.sqrt(fan_in)
               for i in range(case.count)]
    biases = [np.random.default_rng(conv.seed + 7 * i + 1).normal(0.0, 0.2, conv.out_features)
              for i in range(case.count)]
    e = conv.element
    if bound:
        rounded = lambda v: np.asarray(v).astype(conv.dtype).astype(np.float64)  # noqa: E731
        affine = {k: rounded(v) for k, v in affine.items()}
        affine.update(scale=np.abs(affine["scale"]), offset=np.abs(affine["offset"]), mean=-np.abs(affine["mean"]))
        kernels = [np.abs(rounded(k)) for k in kernels]
        biases = [np.abs(rounded(b)) for b in biases]
        e = "f64"
    feature = conv.input_layout.index("f")
    xt, yt = _tensor(conv.input_shape, e), _tensor(conv.output_shape, e)
    vector, out_vector = _tensor((c,), e), _tensor((conv.out_features,), e)
    arguments: list[tuple[str, str, np.ndarray]] = []
    lines: list[str] = []

    def value(name: str, values: np.ndarray, shape_type: str) -> str:
        if case.params == "arguments" and not bound:
            arguments.append((name, shape_type, np.asarray(values).astype(conv.dtype)))
        else:
            lines.append(_constant(name, values, e))
        return f"%{name}"

    if case.form == "batch_norm_inference":
        for name, v in affine.items():
            lines.append(_constant(name, v, e))
        epsilon = repr(float(np.float32(conv.epsilon)))
        lines.append(
            f'  %a = "stablehlo.batch_norm_inference"(%x, %scale, %offset, %mean, %variance) '
            f"{{epsilon = {epsilon} : f32, feature_index = {feature} : i64}}"
            f" : ({xt}, {vector}, {vector}, {vector}, {vector}) -> {xt}")
    else:
        s = value("s", affine["scale"], vector)
        t = value("t", affine["offset"], vector)
        lines += [
            f"  %s_b = stablehlo.broadcast_in_dim {s}, dims = [{feature}] : ({vector}) -> {xt}",
            f"  %t_b = stablehlo.broadcast_in_dim {t}, dims = [{feature}] : ({vector}) -> {xt}",
        ]
        if case.form == "split":
            # Flax's LayerNorm: x * (r * s) + t, a per-position factor r times the scale.
            r = rng.uniform(0.5, 1.5, conv.input_shape)
            lines += [
                _constant("r", np.abs(r) if bound else r, e),
                f"  %rs = stablehlo.multiply %r, %s_b : {xt}",
                f"  %m = stablehlo.multiply %x, %rs : {xt}",
            ]
        else:
            lines.append(f"  %m = stablehlo.multiply %x, %s_b : {xt}")
        lines.append(f"  %a = stablehlo.add %m, %t_b : {xt}")
    results = []
    for i in range(case.count):
        k = value(f"k{i}", kernels[i], _tensor(conv.kernel_shape, e))
        lines.append(_convolution(conv, f"%c{i}", "%a", k, e))
        result = f"%c{i}"
        if case.own_bias[i]:
            b = value(f"b{i}", biases[i], out_vector)
            lines += [
                f"  %b{i}_b = stablehlo.broadcast_in_dim {b}, dims = [{conv.feature_index}] : ({out_vector}) -> {yt}",
                f"  %y{i} = stablehlo.add %c{i}, %b{i}_b : {yt}",
            ]
            result = f"%y{i}"
        results.append(result)
    signature = ", ".join([f"%x: {xt}"] + [f"%{name}: {t}" for name, t, _ in arguments])
    text = "\n".join([
        f"func.func @main({signature}) -> ({', '.join([yt] * case.count)}) {{",
        *lines,
        f"  return {', '.join(results)} : {', '.join([yt] * case.count)}",
        "}",
        "",
    ])
    return text, [v for _, _, v in arguments]


def _convolution_inputs(text: str) -> list[str]:
    """For each convolution of `@main`, what it reads: "x", "x * r" (x times a value that
    is not x), either of those "+ c", else the name of the op it reads."""
    with make_ir_context():
        module = ir.Module.parse(text)
        main = next(op for op in module.body.operations if op.sym_name.value == "main")
        x = main.regions[0].blocks[0].arguments[0]

        def describe(value: ir.Value) -> str:
            if value == x:
                return "x"
            owner = value.owner
            if owner.name == "stablehlo.multiply" and x in list(owner.operands):
                return "x * r"
            if owner.name == "stablehlo.add":
                inner = [describe(v) for v in owner.operands]
                for d in inner:
                    if d in ("x", "x * r"):
                        return d + " + c"
            return owner.name

        return [
            describe(op.operands[0])
            for op in main.regions[0].blocks[0].operations
            if op.operation.name == "stablehlo.convolution"
        ]


@examples(ci=60)
@given(case=consumers(), data_seed=st.integers(0, 2**32 - 1))
def test_an_affine_map_before_several_convolutions_folds_into_each_and_computes_the_same(case, data_seed):
    """A batch norm, x * s + t or x * (r * s) + t read by 1 to 3 convolutions, values as
    constants or as arguments: every convolution then reads x itself (x * r), or all of
    them read one add x + t / s (the shift before a padded convolution, or where bias adds after each would
    not remove an op), with the reason in the report; XLA computes the same outputs."""
    text, parameters = _consumers_text(case)
    folded, report = fold(text)
    assert count_batch_norms(folded) == 0, report.to_text()
    inputs = _convolution_inputs(folded)
    assert len(inputs) == case.count
    # The split form keeps x * r, the per-position factor the scale was split off.
    reads = "x * r" if case.form == "split" else "x"
    assert set(inputs) in ({reads}, {reads + " + c"}), (inputs, report.to_text())
    kept = {s.reason for s in report.skips}
    if inputs[0] == reads:
        assert kept == set(), report.to_text()
    else:
        assert len(kept) == 1 and kept <= {
            "convolution pads or dilates its input: the shift cannot pass its zeros",
            "folding would add as many activation-sized ops as it removes",
            "folding would move an add onto a larger tensor",
        }, report.to_text()

    x = np.random.default_rng(data_seed).standard_normal(case.conv.input_shape).astype(case.conv.dtype)
    expected = run_on_cpu(text, [x, *parameters])
    actual = run_on_cpu(folded, [x, *parameters])
    bounds = run_on_cpu(_consumers_text(case, bound=True)[0], [np.abs(x.astype(np.float64))])
    for e, a, b in zip(expected, actual, bounds):
        e, a = e.astype(np.float64), a.astype(np.float64)
        scale = np.maximum(np.maximum(b, np.max(np.abs(e))), np.finfo(np.float64).tiny)
        error = np.max(np.abs(a - e) / scale)
        assert error <= TOLERANCE[case.conv.dtype], f"error {error:.3g} > {TOLERANCE[case.conv.dtype]:.3g}"


# --- (d) unsafe variants are left as they were, and the report says why --------------------


def _unsafe(conv: Conv, variant: str, rng: np.random.Generator) -> tuple[str, str]:
    """(module text, the reason the report must give) for one unsafe variant of `conv`.

    The reasons are those of the batch_norm_inference pattern, or of the first step of a
    decomposed form that the variant makes unsafe (`_DECOMPOSED_REASON`)."""
    stats = draw_stats(conv)
    c = int(rng.integers(conv.out_features))  # the channel that makes it unsafe
    if variant == "second_user":
        return module_text(conv, (stats,), second_user=True), (
            "bias add result has other users" if conv.bias else "producer result has other users"
        )
    decomposed = _DECOMPOSED_REASON.get((conv.form, variant))
    if variant == "variance_plus_epsilon_zero":
        # epsilon 0.25 and variance -0.25 are exact in every element type: the sum is 0.
        conv = replace(conv, epsilon=0.25)
        variance = stats.variance.copy()
        variance[c] = -0.25
        return module_text(conv, (replace(stats, variance=variance),)), (
            decomposed or "variance + epsilon is not positive"
        )
    if variant == "negative_variance":
        variance = stats.variance.copy()
        variance[c] = -1.0
        return module_text(conv, (replace(stats, variance=variance),)), (
            decomposed or "variance + epsilon is not positive"
        )
    if variant == "nan_scale":
        scale = stats.scale.copy()
        scale[c] = np.nan
        return module_text(conv, (replace(stats, scale=scale),)), (
            decomposed or "batch-norm operands are not finite"
        )
    assert variant == "f16_overflow"
    # One weight of channel c near f16's largest finite value (65504), scaled by 4.
    conv = replace(conv, element="f16")
    kernel = np.moveaxis(stats.kernel.copy(), conv.kernel_output_axis, 0)
    kernel[(c,) + (0,) * (kernel.ndim - 1)] = 60000.0
    kernel = np.moveaxis(kernel, 0, conv.kernel_output_axis)
    scale, variance = stats.scale.copy(), stats.variance.copy()
    scale[c], variance[c] = 4.0, 1.0 - conv.epsilon
    unsafe = replace(stats, kernel=kernel, scale=scale, variance=variance)
    return module_text(conv, (unsafe,)), "folded weights overflow their element type"


UNSAFE = ("second_user", "variance_plus_epsilon_zero", "negative_variance", "nan_scale", "f16_overflow")
"""Variants that must not fold. Only `second_user` applies to parameters passed as
arguments: their values are not known when folding (the in-graph fold assumes finite
parameters, as the README says)."""

_DECOMPOSED_REASON = {
    # rsqrt(0) = inf, rsqrt(-1) = nan, nan * scale: the multiply's factor.
    **{("flax", v): "per-channel factor is not finite" for v in UNSAFE[1:4]},
    # x / sqrt(0): a zero divisor; x / sqrt(-1): a nan divisor; then x * nan.
    ("equinox", "variance_plus_epsilon_zero"): "per-channel divisor has a zero",
    ("equinox", "negative_variance"): "per-channel factor is not finite",
    ("equinox", "nan_scale"): "per-channel factor is not finite",
    # 1 / sqrt(0) = inf, 1 / sqrt(-1) = nan, then x * nan.
    **{("torch_mlir", v): "per-channel factor is not finite" for v in UNSAFE[1:4]},
}


@st.composite
def unsafe_cases(draw, forms=FORMS) -> tuple[Conv, str, int]:
    """(conv, variant, seed): a layer in one of `forms` and a variant that applies to it."""
    conv = draw(convolutions(forms=forms))
    variants = UNSAFE if conv.params == "constants" else ("second_user",)
    return conv, draw(st.sampled_from(variants)), draw(st.integers(0, 2**32 - 1))


@examples(ci=150)
@given(case=unsafe_cases(forms=("batch_norm_inference",)))
def test_unsafe_variants_are_left_exactly_as_mlir_prints_them(case):
    conv, variant, seed = case
    text, reason = _unsafe(conv, variant, np.random.default_rng(seed))
    folded, report = fold(text)
    assert folded == printed(text)
    assert report.folded == 0
    assert [s.reason for s in report.skips] == [reason]


def _steps(path: Counter) -> int:
    """Activation-sized ops of a decomposed batch norm on an activation path."""
    return sum(path[f"stablehlo.{name}"] for name in ("subtract", "multiply", "divide", "reshape"))


# Found by the long profile: one channel, so Flax's reshape C -> 1x1x1 leaves no wide
# dimension and the NaN scale is read as a uniform value; NaN != NaN made it "not
# uniform", and the factor was folded in the graph as if it were not a constant, past
# the finiteness check.
ONE_CHANNEL_FLAX_F16 = Conv(
    element="f16", input_layout=("b", "f", "0"), kernel_layout=("o", "i", "0"),
    output_layout=("b", "f", "0"), batch=1, in_features=1, out_features=1, feature_groups=1,
    batch_groups=1, input_spatial=(1,), kernel_spatial=(1,), stride=(1,), pad=((0, 0),),
    lhs_dilate=(1,), rhs_dilate=(1,), reverse=(False,), bias=None, epsilon=1e-05, seed=0,
    form="flax", params="constants",
)


@examples(ci=60)
@given(case=unsafe_cases(forms=FORMS[1:]))
@example(case=(ONE_CHANNEL_FLAX_F16, "nan_scale", 0))
def test_unsafe_decomposed_chains_keep_their_unsafe_step_and_say_why(case):
    """A decomposed batch norm may fold its safe steps (merge `- mean` into the bias,
    divide by a finite sqrt(var + eps)) before the unsafe one; the unsafe step stays,
    with the reason. With a second user nothing in the chain is a candidate, so only the
    identity reshape pair (`equinox`) may go."""
    conv, variant, seed = case
    text, reason = _unsafe(conv, variant, np.random.default_rng(seed))
    folded, report = fold(text)
    assert [s.reason for s in report.skips] == [reason], report.to_text()
    before, after = activation_path(text), activation_path(folded)
    assert _steps(after) >= 1, after
    assert after["stablehlo.convolution"] == 1
    if variant == "second_user":
        assert report.folded == 0
        assert after == before - Counter({"stablehlo.reshape": 2 if conv.form == "equinox" else 0})
    else:
        assert report.folded < FOLDS_PER_LAYER[conv.form]


# --- (e) bytecode and portable artifacts ---------------------------------------------------


def _bytecode(module: ir.Module) -> bytes:
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def _through_artifact(module: ir.Module, version: str, context: ir.Context) -> str:
    """`module` written as a portable artifact of `version` and read back, as text.

    Reading back legalizes VHLO, which drops attributes that hold their default value
    (an all-ones stride, zero padding), so this is compared with itself, not with the
    text the module was written from."""
    artifact = stablehlo.serialize_portable_artifact(module, version)
    return str(stablehlo.deserialize_portable_artifact(context, artifact))


PORTABLE_FORMS = FORMS[:-1]
"""Forms a portable artifact can hold: torch-mlir's `arith.constant` has no VHLO form
(writing one fails: "failed to legalize unresolved materialization"), and with its values
as arguments the epsilon stays in the folded module."""


@examples(ci=60)
@given(conv=convolutions(forms=PORTABLE_FORMS), oldest=st.booleans())
def test_folded_module_round_trips_through_bytecode_and_portable_artifacts(conv, oldest):
    text = module_text(conv)
    folded, _ = fold(text)
    with make_ir_context() as context:
        version = str(stablehlo.get_minimum_version() if oldest else stablehlo.get_current_version())
        module = ir.Module.parse(folded)
        assert str(ir.Module.parse(_bytecode(module))) == folded
        once = _through_artifact(module, version, context)
        assert _through_artifact(ir.Module.parse(once), version, context) == once

        # Folding the bytecode or the artifact of the original gives the same module as
        # folding its text.
        original = ir.Module.parse(text)
        from_bytecode = stablehlo_bnfold.fold_batch_norm(_bytecode(original), options=LARGER)
        assert isinstance(from_bytecode, bytes)
        assert str(ir.Module.parse(from_bytecode)) == folded
        from_artifact = stablehlo_bnfold.fold_batch_norm(
            stablehlo.serialize_portable_artifact(original, version), options=LARGER
        )
        assert isinstance(from_artifact, bytes)
        assert str(stablehlo.deserialize_portable_artifact(context, from_artifact)) == once


@pytest.mark.parametrize("element", sorted(DTYPES))
def test_the_generator_writes_modules_that_verify_in_every_element_type(element):
    """A guard on the generator itself: a module it writes parses and verifies, so a
    property failure is about the fold and not about the text."""
    conv = Conv(
        element=element, input_layout=("b", "0", "1", "f"), kernel_layout=("0", "1", "i", "o"),
        output_layout=("b", "f", "0", "1"), batch=2, in_features=3, out_features=4,
        feature_groups=1, batch_groups=1, input_spatial=(5, 4), kernel_spatial=(3, 2),
        stride=(2, 1), pad=((1, 0), (0, 1)), lhs_dilate=(1, 2), rhs_dilate=(2, 1),
        reverse=(True, False), bias="after", epsilon=1e-3, seed=7,
    )
    assert conv.output_shape == (2, 4, 1, 7)
    text = module_text(conv)
    assert printed(text).count("stablehlo.convolution") == 1
    assert count_batch_norms(text) == 1


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("form", FORMS)
def test_the_generator_writes_every_form_with_its_values_as_constants_or_arguments(form, params):
    """A guard on the generator: each form parses and verifies, holds one convolution on
    the activation path, and takes its six values (kernel, bias, four batch-norm values)
    as arguments exactly when asked."""
    conv = Conv(
        element="bf16", input_layout=("f", "0", "b"), kernel_layout=("i", "o", "0"),
        output_layout=("0", "f", "b"), batch=1, in_features=2, out_features=3,
        feature_groups=1, batch_groups=1, input_spatial=(4,), kernel_spatial=(2,),
        stride=(1,), pad=((0, 0),), lhs_dilate=(1,), rhs_dilate=(1,), reverse=(False,),
        bias="before", epsilon=1e-5, seed=3, form=form, params=params,
    )
    module = build(conv)
    path = activation_path(module.text)
    assert path["stablehlo.convolution"] == 1
    assert count_batch_norms(module.text) == (form == "batch_norm_inference")
    assert len(module.parameters) == (6 if params == "arguments" else 0)
    assert len(main_input_types(module.text)) == 1 + len(module.parameters)
