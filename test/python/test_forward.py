"""Batch norms folded forward across a relu, a zero pad or a max-pool into the linear ops
after them (issue 21: BN -> ReLU -> conv, as in DenseNet and ResNetV2), each folded and
run through XLA on the CPU against the original (`fold_and_compare`)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from helpers import DTYPES, Compared, fold_and_compare, run_on_cpu

import stablehlo_bnfold
from stablehlo_bnfold.fold import reasons

_RNG = np.random.default_rng(21)


def _f32(values: np.ndarray) -> str:
    return np.array2string(np.asarray(values, np.float32), separator=", ", threshold=10**6).replace("\n", "")


def _batch_norm(name: str, operand: str, gamma: np.ndarray) -> str:
    """A batch_norm_inference of `operand` (NHWC, 1x6x6xC) named %name, its scale `gamma`."""
    c = len(gamma)
    stats = [gamma, _RNG.normal(0, 0.5, c), _RNG.normal(0, 0.5, c), _RNG.uniform(0.5, 1.5, c)]
    names = ["scale", "offset", "mean", "var"]
    lines = [
        f"  %{name}_{n} = stablehlo.constant dense<{_f32(v)}> : tensor<{c}xf32>" for n, v in zip(names, stats)
    ]
    operands = ", ".join(f"%{name}_{n}" for n in names)
    vector = f"tensor<{c}xf32>"
    lines.append(
        f'  %{name} = "stablehlo.batch_norm_inference"(%{operand}, {operands}) '
        f"{{epsilon = 1.0e-03 : f32, feature_index = 3 : i64}} : "
        f"(tensor<1x6x6x{c}xf32>, {vector}, {vector}, {vector}, {vector}) -> tensor<1x6x6x{c}xf32>"
    )
    return "\n".join(lines)


def _folded_forward(module: str, *, seed: int, through: list[str], kept: int) -> Compared:
    """`fold_and_compare` of `module`'s two batch norms, each folded forward through the
    ops `through` names (sorted), `kept` of them keeping the shift in front."""
    compared = fold_and_compare(module, seed=seed, batch_norms_left=0, folds=2)
    assert sorted(fold.through for fold in compared.report.folds) == through
    assert [s.reason for s in compared.report.skips] == [reasons.SHIFT_KEPT_PASSED] * kept
    return compared


def _kernel(shape: tuple[int, ...]) -> str:
    return f"dense<{_f32(_RNG.normal(0, 0.5, shape))}> : tensor<{'x'.join(map(str, shape))}xf32>"


# jax.nn.relu as jax.export writes it: `call @relu(%x)` of a private function.
_RELU = """func.func private @relu(%arg0: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x6x6x4xf32>
  %1 = stablehlo.maximum %arg0, %0 : tensor<1x6x6x4xf32>
  return %1 : tensor<1x6x6x4xf32>
}
"""

_CONV = "dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}}"

# BN (scales of both signs) -> call @relu -> 1x1 convolution and zero pad -> 3x3
# convolution (two readers, ResNetV2's shortcut and residual branch); BN (positive scales)
# -> relu -> max-pool -> 1x1 convolution.
PREACTIVATION = f"""
func.func @main(%x: tensor<1x6x6x4xf32>, %z: tensor<1x6x6x3xf32>) -> (tensor<1x6x6x5xf32>, tensor<1x6x6x2xf32>, tensor<1x3x3x2xf32>) {{
{_batch_norm("bn1", "x", np.array([1.5, -0.75, 0.5, -1.25]))}
  %r1 = call @relu(%bn1) : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %k1 = stablehlo.constant {_kernel((1, 1, 4, 5))}
  %c1 = stablehlo.convolution(%r1, %k1) {_CONV.format()} : (tensor<1x6x6x4xf32>, tensor<1x1x4x5xf32>) -> tensor<1x6x6x5xf32>
  %pz = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %r1, %pz, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<1x6x6x4xf32>, tensor<f32>) -> tensor<1x8x8x4xf32>
  %k2 = stablehlo.constant {_kernel((3, 3, 4, 2))}
  %c2 = stablehlo.convolution(%p, %k2) {_CONV.format()} : (tensor<1x8x8x4xf32>, tensor<3x3x4x2xf32>) -> tensor<1x6x6x2xf32>
{_batch_norm("bn2", "z", np.array([0.5, 1.5, 2.0]))}
  %zero = stablehlo.constant dense<0.0> : tensor<1x6x6x3xf32>
  %r2 = stablehlo.maximum %bn2, %zero : tensor<1x6x6x3xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%r2, %ninf) ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }}) {{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}} : (tensor<1x6x6x3xf32>, tensor<f32>) -> tensor<1x3x3x3xf32>
  %k3 = stablehlo.constant {_kernel((1, 1, 3, 2))}
  %c3 = stablehlo.convolution(%mp, %k3) {_CONV.format()} : (tensor<1x3x3x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x3x3x2xf32>
  return %c1, %c2, %c3 : tensor<1x6x6x5xf32>, tensor<1x6x6x2xf32>, tensor<1x3x3x2xf32>
}}
{_RELU}"""


def test_batch_norms_before_a_relu_pad_and_max_pool_fold_forward_and_compute_the_same():
    compared = fold_and_compare(PREACTIVATION, seed=0, batch_norms_left=0, folds=2)
    folds = {fold.through for fold in compared.report.folds}
    assert folds == {"stablehlo.maximum, stablehlo.pad", "stablehlo.maximum, stablehlo.reduce_window"}
    assert [s.reason for s in compared.report.skips] == [reasons.SHIFT_KEPT_PASSED] * 2
    # The relu of the batch norm with negative scales became one clamp; the other stays.
    assert compared.folded.count("stablehlo.clamp") == 1
    assert "call @relu" not in compared.folded
    assert "stablehlo.multiply" not in compared.folded


# Two heads on one feature map: BN (scales of both signs) -> relu -> global average pool
# -> Dense (DenseNet's and ResNetV2's last batch norm), and BN -> global average pool ->
# Dense with a bias (a classifier after a BN, no relu: the shift passes the sum as 36 * t).
HEADS = f"""
func.func @main(%x: tensor<1x6x6x4xf32>, %z: tensor<1x6x6x3xf32>) -> (tensor<1x5xf32>, tensor<1x2xf32>) {{
{_batch_norm("bn1", "x", np.array([1.5, -0.75, 0.5, -1.25]))}
  %r1 = call @relu(%bn1) : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s1 = stablehlo.reduce(%r1 init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x6x6x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %n1 = stablehlo.constant dense<36.0> : tensor<1x4xf32>
  %m1 = stablehlo.divide %s1, %n1 : tensor<1x4xf32>
  %w1 = stablehlo.constant {_kernel((4, 5))}
  %d1 = stablehlo.dot_general %m1, %w1, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x5xf32>) -> tensor<1x5xf32>
{_batch_norm("bn2", "z", np.array([0.5, -1.5, 2.0]))}
  %s2 = stablehlo.reduce(%bn2 init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x6x6x3xf32>, tensor<f32>) -> tensor<1x3xf32>
  %n2 = stablehlo.constant dense<36.0> : tensor<1x3xf32>
  %m2 = stablehlo.divide %s2, %n2 : tensor<1x3xf32>
  %w2 = stablehlo.constant {_kernel((3, 2))}
  %d2 = stablehlo.dot_general %m2, %w2, contracting_dims = [1] x [0] : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  %b2 = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %bb2 = stablehlo.broadcast_in_dim %b2, dims = [1] : (tensor<2xf32>) -> tensor<1x2xf32>
  %o2 = stablehlo.add %d2, %bb2 : tensor<1x2xf32>
  return %d1, %o2 : tensor<1x5xf32>, tensor<1x2xf32>
}}
{_RELU}"""


def test_batch_norms_before_a_global_average_pool_fold_into_the_dense_layer_after_it():
    # Four folds: each global average pool's divide into its Dense, then each batch norm.
    compared = fold_and_compare(HEADS, seed=1, batch_norms_left=0, folds=4)
    through = sorted(fold.through for fold in compared.report.folds if fold.through)
    assert through == ["stablehlo.maximum, stablehlo.reduce", "stablehlo.reduce"]
    # The relu head keeps its shift in front; the other head's goes into the Dense's bias.
    assert [s.reason for s in compared.report.skips] == [reasons.SHIFT_KEPT_PASSED]
    assert compared.folded.count("stablehlo.clamp") == 1
    assert "stablehlo.multiply" not in compared.folded


# BN (scales of both signs) -> relu -> reshape (H and W flattened into tokens, channels
# whole) -> Dense; and BN -> transpose (NHWC to NCHW) -> dot_general over the channels,
# no relu: its shift passes the transpose too, into a bias after the dot_general.
TOKENS = f"""
func.func @main(%x: tensor<1x6x6x4xf32>, %z: tensor<1x6x6x3xf32>) -> (tensor<1x36x5xf32>, tensor<1x6x6x1xf32>) {{
{_batch_norm("bn1", "x", np.array([1.5, -0.75, 0.5, -1.25]))}
  %r1 = call @relu(%bn1) : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %f1 = stablehlo.reshape %r1 : (tensor<1x6x6x4xf32>) -> tensor<1x36x4xf32>
  %w1 = stablehlo.constant {_kernel((4, 5))}
  %d1 = stablehlo.dot_general %f1, %w1, contracting_dims = [2] x [0] : (tensor<1x36x4xf32>, tensor<4x5xf32>) -> tensor<1x36x5xf32>
{_batch_norm("bn2", "z", np.array([0.5, -1.5, 2.0]))}
  %t2 = stablehlo.transpose %bn2, dims = [0, 3, 1, 2] : (tensor<1x6x6x3xf32>) -> tensor<1x3x6x6xf32>
  %w2 = stablehlo.constant {_kernel((3, 1))}
  %d2 = stablehlo.dot_general %t2, %w2, contracting_dims = [1] x [0] : (tensor<1x3x6x6xf32>, tensor<3x1xf32>) -> tensor<1x6x6x1xf32>
  return %d1, %d2 : tensor<1x36x5xf32>, tensor<1x6x6x1xf32>
}}
{_RELU}"""


def test_batch_norms_before_a_reshape_or_transpose_fold_into_the_dense_layer_after_it():
    through = ["stablehlo.maximum, stablehlo.reshape", "stablehlo.transpose"]
    compared = _folded_forward(TOKENS, seed=2, through=through, kept=1)
    assert "stablehlo.multiply" not in compared.folded


# BN (positive scales) -> torch-mlir's inline leaky relu, select(v > 0, v, v * 0.1) -> 3x3
# convolution; BN -> jax.nn.leaky_relu as jax.export writes it (`call @leaky_relu(%v, %a)`,
# its select a call of `_where`) -> 1x1 convolution.
LEAKY = f"""
func.func @main(%x: tensor<1x6x6x4xf32>, %z: tensor<1x6x6x4xf32>) -> (tensor<1x4x4x5xf32>, tensor<1x6x6x2xf32>) {{
{_batch_norm("bn1", "x", np.array([1.5, 0.75, 0.5, 1.25]))}
  %zero = stablehlo.constant dense<0.0> : tensor<1x6x6x4xf32>
  %alpha = stablehlo.constant dense<0.1> : tensor<1x6x6x4xf32>
  %a1 = stablehlo.multiply %bn1, %alpha : tensor<1x6x6x4xf32>
  %g1 = stablehlo.compare GT, %bn1, %zero, FLOAT : (tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xi1>
  %r1 = stablehlo.select %g1, %bn1, %a1 : tensor<1x6x6x4xi1>, tensor<1x6x6x4xf32>
  %k1 = stablehlo.constant {_kernel((3, 3, 4, 5))}
  %c1 = stablehlo.convolution(%r1, %k1) {_CONV.format()} : (tensor<1x6x6x4xf32>, tensor<3x3x4x5xf32>) -> tensor<1x4x4x5xf32>
{_batch_norm("bn2", "z", np.array([0.5, 1.5, 2.0, 0.25]))}
  %slope = stablehlo.constant dense<0.2> : tensor<f32>
  %r2 = call @leaky_relu(%bn2, %slope) : (tensor<1x6x6x4xf32>, tensor<f32>) -> tensor<1x6x6x4xf32>
  %k2 = stablehlo.constant {_kernel((1, 1, 4, 2))}
  %c2 = stablehlo.convolution(%r2, %k2) {_CONV.format()} : (tensor<1x6x6x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x6x6x2xf32>
  return %c1, %c2 : tensor<1x4x4x5xf32>, tensor<1x6x6x2xf32>
}}
func.func private @leaky_relu(%arg0: tensor<1x6x6x4xf32>, %arg1: tensor<f32>) -> tensor<1x6x6x4xf32> {{
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x6x6x4xf32>
  %1 = stablehlo.compare GE, %arg0, %0, FLOAT : (tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xi1>
  %2 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1x6x6x4xf32>
  %3 = stablehlo.multiply %2, %arg0 : tensor<1x6x6x4xf32>
  %4 = call @_where(%1, %arg0, %3) : (tensor<1x6x6x4xi1>, tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  return %4 : tensor<1x6x6x4xf32>
}}
func.func private @_where(%arg0: tensor<1x6x6x4xi1>, %arg1: tensor<1x6x6x4xf32>, %arg2: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> {{
  %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<1x6x6x4xi1>, tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}}
"""


def test_batch_norms_before_a_leaky_relu_fold_forward_and_compute_the_same():
    compared = _folded_forward(LEAKY, seed=3, through=["stablehlo.select"] * 2, kept=2)
    assert compared.folded.count("stablehlo.multiply") == 2  # each leaky relu's a * v


# BN (scales of both signs) -> ReLU6 as a clamp -> 3x3 convolution (VALID, every tap reads
# the input): the bounds move with scale and shift, the shift into a bias after it; BN ->
# jax.nn.relu6 (`call @relu6(%v)`) -> zero pad -> 3x3 convolution: the pad blocks the
# shift, which stays in front, the bounds moved by the scale alone.
CLAMPS = f"""
func.func @main(%x: tensor<1x6x6x4xf32>, %z: tensor<1x6x6x4xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x6x6x2xf32>) {{
{_batch_norm("bn1", "x", np.array([1.5, -0.75, 0.5, -1.25]))}
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r1 = stablehlo.clamp %lo, %bn1, %hi : (tensor<f32>, tensor<1x6x6x4xf32>, tensor<f32>) -> tensor<1x6x6x4xf32>
  %k1 = stablehlo.constant {_kernel((3, 3, 4, 3))}
  %c1 = stablehlo.convolution(%r1, %k1) {_CONV.format()} : (tensor<1x6x6x4xf32>, tensor<3x3x4x3xf32>) -> tensor<1x4x4x3xf32>
{_batch_norm("bn2", "z", np.array([0.5, -1.5, 2.0, 0.25]))}
  %r2 = call @relu6(%bn2) : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %pz = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %r2, %pz, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<1x6x6x4xf32>, tensor<f32>) -> tensor<1x8x8x4xf32>
  %k2 = stablehlo.constant {_kernel((3, 3, 4, 2))}
  %c2 = stablehlo.convolution(%p, %k2) {_CONV.format()} : (tensor<1x8x8x4xf32>, tensor<3x3x4x2xf32>) -> tensor<1x6x6x2xf32>
  return %c1, %c2 : tensor<1x4x4x3xf32>, tensor<1x6x6x2xf32>
}}
func.func private @relu6(%arg0: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> {{
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %cst_0 = stablehlo.constant dense<6.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x6x6x4xf32>
  %1 = stablehlo.maximum %arg0, %0 : tensor<1x6x6x4xf32>
  %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x6x6x4xf32>
  %3 = stablehlo.minimum %1, %2 : tensor<1x6x6x4xf32>
  return %3 : tensor<1x6x6x4xf32>
}}
"""


def test_batch_norms_before_a_clamp_fold_forward_with_the_bounds_moved_and_compute_the_same():
    # Only the padded branch keeps its shift in front.
    through = ["stablehlo.clamp", "stablehlo.clamp, stablehlo.pad"]
    compared = _folded_forward(CLAMPS, seed=4, through=through, kept=1)
    assert compared.folded.count("stablehlo.clamp") == 2
    assert "call @relu6" not in compared.folded
    assert "stablehlo.multiply" not in compared.folded


# BN (scales of both signs) -> relu -> a slice of channels 1 to 3 -> 3x3 convolution; BN
# concatenated along the channels after an argument (identity on its range) -> 1x1
# convolution (the shift into a bias after it).
RANGES = f"""
func.func @main(%x: tensor<1x6x6x4xf32>, %z: tensor<1x6x6x3xf32>, %w: tensor<1x6x6x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x6x6x1xf32>) {{
{_batch_norm("bn1", "x", np.array([1.5, -0.75, 0.5, -1.25]))}
  %zero = stablehlo.constant dense<0.0> : tensor<1x6x6x4xf32>
  %r1 = stablehlo.maximum %bn1, %zero : tensor<1x6x6x4xf32>
  %s1 = stablehlo.slice %r1 [0:1, 0:6, 0:6, 1:4] : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x3xf32>
  %k1 = stablehlo.constant {_kernel((3, 3, 3, 2))}
  %c1 = stablehlo.convolution(%s1, %k1) {_CONV.format()} : (tensor<1x6x6x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x4x4x2xf32>
{_batch_norm("bn2", "z", np.array([0.5, -1.5, 2.0]))}
  %j = stablehlo.concatenate %w, %bn2, dim = 3 : (tensor<1x6x6x2xf32>, tensor<1x6x6x3xf32>) -> tensor<1x6x6x5xf32>
  %k2 = stablehlo.constant {_kernel((1, 1, 5, 1))}
  %c2 = stablehlo.convolution(%j, %k2) {_CONV.format()} : (tensor<1x6x6x5xf32>, tensor<1x1x5x1xf32>) -> tensor<1x6x6x1xf32>
  return %c1, %c2 : tensor<1x4x4x2xf32>, tensor<1x6x6x1xf32>
}}
"""


def test_batch_norms_before_a_slice_or_concatenate_fold_forward_on_their_channel_ranges():
    through = ["stablehlo.concatenate", "stablehlo.maximum, stablehlo.slice"]
    compared = _folded_forward(RANGES, seed=5, through=through, kept=1)
    assert "stablehlo.multiply" not in compared.folded


def _jax_forms() -> dict[str, tuple[object, str]]:
    """Per-channel affine maps before the activations and channel ops of jax, as its
    functions export them (calls of jitted helpers), each before a VALID convolution; and
    the ops a fold reports passing."""
    import jax
    import jax.numpy as jnp

    scale = np.array([1.5, -0.75, 0.5, -1.25], np.float32)
    positive = np.abs(scale)
    shift = np.array([0.25, -0.5, 1.0, 0.125], np.float32)
    kernel = _RNG.normal(0, 0.5, (3, 3, 4, 5)).astype(np.float32)
    kept, wider = np.ascontiguousarray(kernel[:, :, 1:3]), np.concatenate([kernel, kernel[:, :, :1]], axis=2)

    def conv(x, k=kernel):
        return jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def where(y):
        return jnp.where(y > 0, y, 0.1 * y)

    return {
        "leaky_relu": (lambda x: conv(jax.nn.leaky_relu(x * positive + shift, 0.1)), "stablehlo.select"),
        "where": (lambda x: conv(where(x * positive + shift)), "stablehlo.select"),
        "relu6": (lambda x: conv(jax.nn.relu6(x * scale + shift)), "stablehlo.clamp"),
        "slice": (lambda x: conv(jax.nn.relu(x * scale + shift)[..., 1:3], kept), "stablehlo.maximum, stablehlo.slice"),
        "concatenate": (
            lambda x: conv(jnp.concatenate([x[..., :1], x * scale + shift], axis=-1), wider),
            "stablehlo.concatenate",
        ),
    }


@pytest.mark.parametrize("form", ["leaky_relu", "where", "relu6", "slice", "concatenate"])
def test_jax_exports_of_the_activations_and_channel_ops_fold_forward_and_compute_the_same(form):
    import jax
    import jax.numpy as jnp

    fn, through = _jax_forms()[form]
    exported = jax.export.export(jax.jit(fn))(jax.ShapeDtypeStruct((1, 6, 6, 4), jnp.float32))
    compared = fold_and_compare(exported.mlir_module(), seed=6, batch_norms_left=0, folds=1)
    assert [fold.through for fold in compared.report.folds] == [through]
    assert compared.folded.count("stablehlo.multiply") == (1 if form in ("leaky_relu", "where") else 0)


@pytest.mark.parametrize(("padding", "include"), [("VALID", True), ("SAME", True), ("SAME", False)])
def test_a_per_channel_map_before_flax_avg_pool_folds_forward_into_the_convolution(padding, include):
    # `nn.avg_pool` is a sum pool and a divide by the window's size, which folds into the
    # convolution first. pool(x * s + t) = pool(x) * s + 4 * t without padding, any sign:
    # nothing is left in front; with padding (count_include_pad) the shift stays in front
    # as x + t / s. Excluding the padding, the divide is by a count per position m, the
    # same for every channel: the scale passes it too, (v * s) / m = (v / m) * s.
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    scale = np.array([1.5, -0.75, 0.5, -1.25], np.float32)
    shift = np.array([0.25, -0.5, 1.0, 0.125], np.float32)
    kernel = _RNG.normal(0, 0.5, (3, 3, 4, 5)).astype(np.float32)

    def fn(x):
        y = nn.avg_pool(x * scale + shift, (2, 2), padding=padding, count_include_pad=include)
        return jax.lax.conv_general_dilated(y, kernel, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    exported = jax.export.export(jax.jit(fn))(jax.ShapeDtypeStruct((1, 6, 6, 4), jnp.float32))
    compared = fold_and_compare(exported.mlir_module(), seed=7, batch_norms_left=0, folds=2 if include else 1)
    through = ["", "stablehlo.reduce_window"] if include else ["stablehlo.reduce_window, stablehlo.divide"]
    assert [fold.through for fold in compared.report.folds] == through
    kept = [reasons.SHIFT_KEPT_PASSED] if padding == "SAME" else []
    assert [s.reason for s in compared.report.skips] == kept
    assert "stablehlo.multiply" not in compared.folded
    assert compared.folded.count("stablehlo.divide") == (0 if include else 1)


def _case(name: str) -> str:
    """The function `name` of forward.mlir's lit cases, alone in a module as `@main`."""
    text = (pathlib.Path(__file__).resolve().parents[1] / "transforms" / "forward.mlir").read_text()
    for chunk in text.split("// -----"):
        if f"func.func @{name}(" in chunk:
            return chunk.replace(f"@{name}(", "@main(")
    raise KeyError(name)


@pytest.mark.parametrize("name", [
    "fold_through_clamp_inverted_bounds",  # returned 6 where the original returns -3
    "fold_through_two_relus_negative_scale",  # crashed the folding process (SIGSEGV)
    "fold_through_two_clamps",
    "fold_through_clamp_large_shift_kept",
])
def test_forward_folds_through_clamps_compute_what_the_original_computes(name):
    compared = fold_and_compare(_case(name), seed=7, batch_norms_left=0, folds=1)
    assert "stablehlo.multiply" not in compared.folded


def _bn_relu6_dense(dtype: str, gamma, beta, mean, var, w) -> str:
    c, o = w.shape
    t, v = f"tensor<64x{c}x{dtype}>", f"tensor<{c}x{dtype}>"
    values = ", ".join(f"%{n}" for n in "gbmv")
    lines = [f"  %{n} = stablehlo.constant dense<{_f32(a)}> : {v}" for n, a in zip("gbmv", (gamma, beta, mean, var))]
    return "\n".join([
        f"func.func @main(%x: {t}) -> tensor<64x{o}x{dtype}> {{", *lines,
        f'  %y = "stablehlo.batch_norm_inference"(%x, {values}) {{epsilon = 1.0e-05 : f32, feature_index = 1 : i64}}'
        f" : ({t}, {v}, {v}, {v}, {v}) -> {t}",
        f"  %lo = stablehlo.constant dense<0.0> : tensor<{dtype}>",
        f"  %hi = stablehlo.constant dense<6.0> : tensor<{dtype}>",
        f"  %r = stablehlo.clamp %lo, %y, %hi : (tensor<{dtype}>, {t}, tensor<{dtype}>) -> {t}",
        f"  %w = stablehlo.constant dense<{_f32(w)}> : tensor<{c}x{o}x{dtype}>",
        f"  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : ({t}, tensor<{c}x{o}x{dtype}>)"
        f" -> tensor<64x{o}x{dtype}>",
        f"  return %d : tensor<64x{o}x{dtype}>", "}",
    ])


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("case", ["dead channel", "huge gamma", "large mean"])
def test_a_forward_fold_through_relu6_is_no_less_accurate_than_the_original(case, dtype):
    """BN -> relu6 -> dense against a float64 evaluation: the folded module's error is at
    most 1.5x the original's. Passing a shift that is large against the clamp's bounds into
    the bias lost every digit (gamma 1e15 in f32: relative error 1e6; a dead channel in bf16:
    10x the original's)."""
    rng = np.random.default_rng(31)
    numpy_type = DTYPES[dtype]
    exact = lambda a: np.asarray(a, numpy_type).astype(np.float64)  # noqa: E731
    gamma, beta = exact(rng.uniform(0.5, 1.5, 8)), exact(rng.normal(0, 0.5, 8))
    mean, var = exact(rng.normal(0, 1, 8)), exact(rng.uniform(0.5, 1.5, 8))
    if case == "dead channel":
        var[0] = 0.0
    elif case == "huge gamma":
        gamma[0] = 1e15 if dtype == "f32" else 1e4
    else:
        mean[:] = exact(rng.normal(100, 1, 8))
    w = exact(rng.normal(0, 1, (8, 4)))
    x = rng.normal(mean, 3 * np.sqrt(var + 1e-5), (64, 8)).astype(numpy_type)
    text = _bn_relu6_dense(dtype, gamma, beta, mean, var, w)
    folded = stablehlo_bnfold.fold_batch_norm(text)
    s = gamma / np.sqrt(var + np.float64(np.float32(1e-5)))
    reference = np.clip((x.astype(np.float64) - mean) * s + beta, 0, 6) @ w
    size = np.abs(reference).max()
    original, after = (np.abs(run_on_cpu(m, [x])[0].astype(np.float64) - reference).max() / size for m in (text, folded))
    assert after <= 1.5 * original + 1e-12, f"folded {after:.3g}, original {original:.3g}"


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_a_batch_norm_between_a_relu_and_flax_max_pool_leaves_no_shift_on_the_full_size_tensor(padding):
    # conv -> relu -> BatchNorm -> nn.max_pool -> 1x1 conv: the scale passes the relu into
    # the first kernel, and the shift passes the max-pool (maxpool(v + t) = maxpool(v) + t:
    # a window one channel wide, -inf as init and padding) into the 1x1 convolution's bias
    # add, on a 4x smaller tensor: no add is left on the 1x8x8x4 one but the first
    # convolution's bias add.
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.relu(nn.Conv(4, (3, 3), padding="SAME")(x))
            y = nn.BatchNorm(use_running_average=True, epsilon=1e-3)(y)
            y = nn.max_pool(y, (3, 3), strides=(2, 2), padding=padding)
            return nn.Conv(5, (1, 1))(y)

    rng = np.random.default_rng(31)
    x = jnp.zeros((1, 8, 8, 3), jnp.float32)
    variables = jax.tree_util.tree_map(
        lambda v: jnp.asarray(rng.normal(0, 0.5, v.shape), jnp.float32), Block().init(jax.random.PRNGKey(0), x)
    )
    stats = variables["batch_stats"]["BatchNorm_0"]
    stats["var"] = jnp.asarray(rng.uniform(0.5, 1.5, 4), jnp.float32)
    variables["params"]["BatchNorm_0"]["scale"] = jnp.asarray(rng.uniform(0.5, 1.5, 4), jnp.float32)
    exported = jax.export.export(jax.jit(lambda x: Block().apply(variables, x)))(
        jax.ShapeDtypeStruct((1, 8, 8, 3), jnp.float32)
    )
    compared = fold_and_compare(exported.mlir_module(), seed=8, batch_norms_left=0, folds=1)
    assert not compared.report.skips
    assert "stablehlo.multiply" not in compared.folded
    # The one add on the full-size tensor is the first convolution's bias add.
    full = [line for line in compared.folded.splitlines() if "stablehlo.add" in line and "tensor<1x8x8x4xf32>" in line]
    assert len(full) == 1


FORWARD_POOL_OF_PADDING_ALONE = """
func.func @main(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %inv = stablehlo.constant dense<[0.5, 0.75]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %x, %i : tensor<1x4x4x2xf32>
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %low = stablehlo.constant dense<0xFF7FFFFF> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%y, %low) <{padding = dense<[[0, 0], [2, 2], [2, 2], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 4, 4, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %c : tensor<1x2x2x3xf32>
}
"""


def test_a_map_before_a_lowest_init_max_pool_with_a_window_of_padding_alone_stays():
    # The first window reads padding alone: the lowest finite value, which the convolution
    # reads as it is; folded, the kernel times s would read it instead of (lowest * s + t).
    compared = fold_and_compare(FORWARD_POOL_OF_PADDING_ALONE, seed=5, batch_norms_left=0, folds=0)
    assert "a window may hold only padding: the scale cannot pass it" in compared.report.to_text()
