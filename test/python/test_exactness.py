"""float64 models fold to within a few ulp of the exact values, and run to within 1e-12.

"Computed in float64 and rounded once" is checked here against a reference that does not
call the package: every folded value is recomputed with Python's `decimal` at 60 digits
from the exact binary values stored in the module (a `Decimal` made from a float is exact;
`float(Decimal)` rounds correctly), then compared with the folded constant in units in the
last place. A float64 fold has at most four float64 roundings between the stored values and
each folded weight (var + eps, the square root, the division, the product), so it lands
within 4 ulp; any step done in float32 (the square root, say) lands about 1e8 ulp away.

End to end, the original and the folded module run through XLA on the CPU on the same
seeded inputs and agree to 1e-12 relative to the largest output (float64's own tolerance
in `helpers.TOLERANCE_F64`; `--verify` shares float32's 1e-6).
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pytest
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir

import stablehlo_bnfold
from helpers import TOLERANCE_F64, random_inputs, relative_error, run_on_cpu

ULPS = 4

# Statistics with irrational square roots; epsilon as the module's f32 attribute holds it.
SCALE = [1.2105055856164184, 0.7677431627585899, 1.4727170538106238]
OFFSET = [-0.08183199703210678, 0.06044135409138762, 0.18068556832781435]
MEAN = [-0.004093400051320695, 0.24824630453641044, 0.14213879172087507]
VARIANCE = [0.5985563384054178, 1.743979247697027, 0.3]
EPSILON = float(np.float32(1e-3))
BIAS = [0.3, -0.7, 0.11]
CHANNELS = 3


def _vector(values) -> str:
    return "dense<[" + ", ".join(repr(float(v)) for v in values) + "]> : tensor<3xf64>"


def _kernel(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _hex(array: np.ndarray) -> str:
    shape = "x".join(map(str, array.shape))
    return f'dense<"0x{array.astype("<f8").tobytes().hex().upper()}"> : tensor<{shape}xf64>'


_STATS = f"""\
  %scale = stablehlo.constant {_vector(SCALE)}
  %offset = stablehlo.constant {_vector(OFFSET)}
  %mean = stablehlo.constant {_vector(MEAN)}
  %var = stablehlo.constant {_vector(VARIANCE)}
"""


def _batch_norm(operand: str, shape: str, feature: int) -> str:
    return (
        f'  %bn = "stablehlo.batch_norm_inference"({operand}, %scale, %offset, %mean, %var) '
        f"{{epsilon = 1.0e-03 : f32, feature_index = {feature} : i64}} : "
        f"({shape}, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> {shape}\n"
    )


CONV_KERNEL = _kernel((2, 2, 2, 3), 1)  # HWIO
DENSE_WEIGHTS = _kernel((4, 3), 2)
# 3 features in, 2 out: a dense layer that widens would keep `x + t/s` in front (the
# folded bias add would sit on a larger tensor), and this test is about the full fold.
INPUT_WEIGHTS = _kernel((3, 2), 3)

CONV = "tensor<1x4x4x3xf64>"
CONV_OP = (
    "stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
    "window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
    f"(tensor<1x5x5x2xf64>, tensor<2x2x2x3xf64>) -> {CONV}"
)

# batch_norm_inference(conv(x) + bias): fold_bn_into_linear.
CONV_BIAS_BN = f"""\
func.func @main(%x: tensor<1x5x5x2xf64>) -> {CONV} {{
  %k = stablehlo.constant {_hex(CONV_KERNEL)}
  %conv = {CONV_OP}
  %b = stablehlo.constant {_vector(BIAS)}
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<3xf64>) -> {CONV}
  %y = stablehlo.add %conv, %bb : {CONV}
{_STATS}{_batch_norm("%y", CONV, 3)}  return %bn : {CONV}
}}
"""

# batch_norm_inference(x . W) over the result's dimension 1.
DENSE_BN = f"""\
func.func @main(%x: tensor<2x4xf64>) -> tensor<2x3xf64> {{
  %w = stablehlo.constant {_hex(DENSE_WEIGHTS)}
  %mm = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf64>, tensor<4x3xf64>) -> tensor<2x3xf64>
{_STATS}{_batch_norm("%mm", "tensor<2x3xf64>", 1)}  return %bn : tensor<2x3xf64>
}}
"""


def _wide(name: str) -> str:
    """Flax's form of a parameter: C -> 1x1x1xC -> the activation."""
    return (
        f"  %{name}_r = stablehlo.reshape %{name} : (tensor<3xf64>) -> tensor<1x1x1x3xf64>\n"
        f"  %{name}_w = stablehlo.broadcast_in_dim %{name}_r, dims = [0, 1, 2, 3] : "
        f"(tensor<1x1x1x3xf64>) -> {CONV}\n"
    )


# Flax's decomposed batch norm: (y - mean) * (rsqrt(var + eps) * scale) + offset, its
# constant expression evaluated by analysis/per_channel.py, then folded by the decomposed
# patterns.
CONV_FLAX = f"""\
func.func @main(%x: tensor<1x5x5x2xf64>) -> {CONV} {{
  %k = stablehlo.constant {_hex(CONV_KERNEL)}
  %conv = {CONV_OP}
{_STATS}  %eps = stablehlo.constant dense<{EPSILON!r}> : tensor<3xf64>
  %ve = stablehlo.add %var, %eps : tensor<3xf64>
  %r = stablehlo.rsqrt %ve : tensor<3xf64>
  %inv = stablehlo.multiply %r, %scale : tensor<3xf64>
{_wide("mean")}{_wide("inv")}{_wide("offset")}  %c = stablehlo.subtract %conv, %mean_w : {CONV}
  %s = stablehlo.multiply %c, %inv_w : {CONV}
  %o = stablehlo.add %s, %offset_w : {CONV}
  return %o : {CONV}
}}
"""

# A BNNeck: batch_norm_inference(x) . W, folded on the input side (W * s, bias W . t).
BN_DENSE = f"""\
func.func @main(%x: tensor<2x3xf64>) -> tensor<2x2xf64> {{
{_STATS}{_batch_norm("%x", "tensor<2x3xf64>", 1)}  %w = stablehlo.constant {_hex(INPUT_WEIGHTS)}
  %mm = stablehlo.dot_general %bn, %w, contracting_dims = [1] x [0] : (tensor<2x3xf64>, tensor<3x2xf64>) -> tensor<2x2xf64>
  return %mm : tensor<2x2xf64>
}}
"""

decimal.getcontext().prec = 60


def _d(values) -> list[Decimal]:
    return [Decimal(float(v)) for v in np.asarray(values, dtype=np.float64).reshape(-1)]


def exact_factor() -> list[Decimal]:
    """s = scale / sqrt(variance + epsilon), per channel, to 60 digits."""
    eps = Decimal(EPSILON)
    return [a / (v + eps).sqrt() for a, v in zip(_d(SCALE), _d(VARIANCE))]


def exact_shift(bias: list[Decimal]) -> list[Decimal]:
    """t = offset + (bias - mean) * s, per channel, to 60 digits."""
    return [o + (b - m) * s for o, b, m, s in zip(_d(OFFSET), bias, _d(MEAN), exact_factor())]


def exact_scaled(weights: np.ndarray, axis: int, factor: list[Decimal]) -> np.ndarray:
    """weights * factor along `axis`, each product rounded once to float64."""
    out = np.empty(weights.shape)
    for index in np.ndindex(weights.shape):
        out[index] = float(Decimal(float(weights[index])) * factor[index[axis]])
    return out


@dataclass(frozen=True)
class Folded:
    """The constants a fold left: the linear op's weights and the bias vector added after it."""

    weights: np.ndarray
    bias: np.ndarray


def fold_constants(text: str) -> tuple[str, Folded]:
    """Fold `text` and read back the folded weights and bias (float64, as stored)."""
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    assert report.folded >= 1 and not report.skips, report
    with make_ir_context():
        module = ir.Module.parse(folded)
        (main,) = module.body.operations
        ops = list(main.regions[0].blocks[0].operations)
        (linear,) = [op for op in ops if op.name in ("stablehlo.convolution", "stablehlo.dot_general")]
        (add,) = [op for op in ops if op.name == "stablehlo.add"]
        assert add.operands[0] == linear.results[0], "the bias add does not read the linear op"
        broadcast = add.operands[1].owner
        assert broadcast.name == "stablehlo.broadcast_in_dim"
        weights = np.array(ir.DenseElementsAttr(linear.operands[1].owner.attributes["value"]))
        bias = np.array(ir.DenseElementsAttr(broadcast.operands[0].owner.attributes["value"]))
    assert weights.dtype == bias.dtype == np.float64
    return folded, Folded(weights, bias)


def ulps(got: np.ndarray, want: np.ndarray) -> float:
    """The largest |got - want| in units in the last place of `want`."""
    return float(np.max(np.abs(got - want) / np.spacing(np.abs(want))))


def assert_within_ulps_of_the_terms(got: np.ndarray, want: list[Decimal], terms: list[Decimal]):
    """|got - want| <= ULPS roundings of the largest term that was added (a sum's ulp is
    meaningless when it cancels)."""
    for g, w, t in zip(got, want, terms):
        limit = ULPS * np.spacing(float(abs(t)))
        assert abs(Decimal(float(g)) - w) <= Decimal(limit), (g, w, limit)


def assert_runs_the_same(original: str, folded: str, seed: int) -> None:
    inputs = random_inputs(original, seed)
    (expected,), (actual,) = run_on_cpu(original, inputs), run_on_cpu(folded, inputs)
    assert actual.dtype == np.float64
    error = relative_error(expected, actual)
    assert error <= TOLERANCE_F64, f"relative error {error:.3g} > {TOLERANCE_F64:.3g}"


@pytest.mark.parametrize(
    "text, weights, axis, bias",
    [
        (CONV_BIAS_BN, CONV_KERNEL, 3, BIAS),
        (DENSE_BN, DENSE_WEIGHTS, 1, [0.0] * CHANNELS),
        (CONV_FLAX, CONV_KERNEL, 3, [0.0] * CHANNELS),
    ],
    ids=["conv-bias-batch-norm", "dot-general-batch-norm", "conv-flax-decomposed"],
)
def test_float64_fold_is_within_a_few_ulp_of_the_exact_weights_and_bias(text, weights, axis, bias):
    folded, got = fold_constants(text)
    factor = exact_factor()
    assert got.weights.shape == weights.shape
    assert ulps(got.weights, exact_scaled(weights, axis, factor)) <= ULPS
    bias = _d(bias)
    terms = [max(abs(o), abs((b - m) * s)) for o, b, m, s in zip(_d(OFFSET), bias, _d(MEAN), factor)]
    assert_within_ulps_of_the_terms(got.bias, exact_shift(bias), terms)
    assert_runs_the_same(text, folded, seed=7)


def test_float64_input_side_fold_is_within_a_few_ulp_of_the_exact_weights_and_bias():
    # dot(x * s + t, W) = dot(x, W * s) + W . t, with s and t per input feature (W's rows).
    folded, got = fold_constants(BN_DENSE)
    factor = exact_factor()
    assert ulps(got.weights, exact_scaled(INPUT_WEIGHTS, 0, factor)) <= ULPS
    shift = [o - m * s for o, m, s in zip(_d(OFFSET), _d(MEAN), factor)]
    columns = [_d(INPUT_WEIGHTS[:, j]) for j in range(INPUT_WEIGHTS.shape[1])]
    want = [sum(w * t for w, t in zip(column, shift)) for column in columns]
    # A sum of 3 products, each rounded, and the sum itself: ULPS roundings of its terms.
    terms = [sum(abs(w * t) for w, t in zip(column, shift)) for column in columns]
    assert_within_ulps_of_the_terms(got.bias, want, terms)
    assert_runs_the_same(BN_DENSE, folded, seed=8)


def test_the_reference_is_exact_where_float64_is():
    # The reference itself: sqrt(0.25 + 0.75) = 1 and 3 * 1 = 3 exactly; and a Decimal
    # made from a float is the float's exact binary value.
    assert (Decimal(0.25) + Decimal(0.75)).sqrt() == 1
    assert float(Decimal(0.1)) == 0.1 and Decimal(0.1) != Decimal("0.1")
    assert exact_scaled(np.array([3.0]), 0, [Decimal(1)])[0] == 3.0
