"""Batch norms after a linear op and the ops between that a per-channel map passes on its
way back into the linear op (issue 21, the output side): reshapes and transposes that
keep the feature dimension whole, concatenates of linear ops, clamps (ReLU6) whose bounds
move with the scale, jax.nn.leaky_relu, average pools and means (`nn.avg_pool`, a
sum pool and a divide; `jnp.mean`, a reduce and a divide), and slices (`y[..., :k]`, a
chunk of the channels; `y[:, 1:5]`, a crop).

Each module is exported for real by Flax or JAX with seeded weights and non-trivial
batch-norm statistics, folded with the API, and run through XLA against the original.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, fold_and_compare
from jax import export

import stablehlo_bnfold

from stablehlo_bnfold.fold.reasons import (
    BIAS_ADD_USERS,
    COST_LARGER,
    RESHAPE_SPLITS_FEATURE,
    SCALE_NEGATIVE,
    SHIFT_KEPT_MAP,
    SHIFT_KEPT_SUM,
)


class _LinearBatchNorm(nn.Module):
    """LeViT's `Linear_BN` in Flax: Dense, then BatchNorm over the tokens flattened into
    the batch (`bn(x.flatten(0, 1)).reshape_as(x)`); `merged` flattens the features into
    the tokens instead, which no fold can undo."""

    features: int
    merged: bool = False

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(self.features)(x)
        flat = y.reshape(y.shape[0], -1) if self.merged else y.reshape(-1, y.shape[-1])
        return nn.BatchNorm(use_running_average=True)(flat).reshape(y.shape)


def _export(module: nn.Module, shape: tuple, seed: int, negative: int | None = 1) -> str:
    """`_exported(...)`'s StableHLO text."""
    return _exported(module, shape, seed, negative).mlir_module()


def _exported(module: nn.Module, shape: tuple, seed: int, negative: int | None = 1) -> export.Exported:
    """`module` exported (a dimension named by a string is symbolic), with seeded weights
    and batch statistics that are not the identity, the gamma of channel `negative`
    negative (a reshape passes any scale)."""
    x = jnp.zeros([2 if isinstance(n, str) else n for n in shape], jnp.float32)
    variables = module.init(jax.random.PRNGKey(seed), x)
    rng = np.random.default_rng(seed)

    def statistics(path, leaf):
        name = path[-1].key
        if name in ("mean", "bias"):
            return jnp.asarray(rng.standard_normal(leaf.shape), leaf.dtype)
        if name == "var":
            return jnp.asarray(rng.uniform(0.5, 1.5, leaf.shape), leaf.dtype)
        if name == "scale":
            sign = np.where(np.arange(leaf.shape[0]) == negative, -1, 1)
            return jnp.asarray(rng.uniform(0.5, 1.5, leaf.shape) * sign, leaf.dtype)
        return leaf

    variables = jax.tree_util.tree_map_with_path(statistics, variables)
    if any(isinstance(n, str) for n in shape):
        shape = export.symbolic_shape(", ".join(str(n) for n in shape))
    spec = jax.ShapeDtypeStruct(shape, np.float32)
    return export.export(jax.jit(lambda v: module.apply(variables, v)))(spec)


def test_levit_linear_reshape_batch_norm_folds_into_the_dense_layer_with_no_add_left():
    # (x . W + b) reshaped, times s plus t, reshaped back = x . (W * s) + (b * s + t): the
    # whole norm goes into the Dense layer, negative gamma included.
    text = _export(_LinearBatchNorm(6), (2, 5, 8), seed=1)
    compared = fold_and_compare(text, seed=2, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    assert (fold.linear, fold.through) == ("stablehlo.dot_general", "stablehlo.reshape")
    main = compared.folded[compared.folded.index("func.func public @main"):]
    for name in ("stablehlo.multiply", "stablehlo.subtract", "stablehlo.reshape"):
        assert name not in main, name
    assert main.count("stablehlo.add") == 1


def test_a_reshape_that_merges_the_features_into_the_tokens_is_refused_with_its_reason():
    text = _export(_LinearBatchNorm(3, merged=True), (2, 5, 8), seed=3)
    compared = fold_and_compare(text, seed=4, batch_norms_left=0, folds=0)
    reasons = [s.reason for s in compared.report.skips if s.pattern == "fold_scale_through_relu"]
    assert reasons == [RESHAPE_SPLITS_FEATURE]


def test_a_batch_norm_after_an_nhwc_convolution_transposed_to_nchw_folds_into_it():
    # A torch-style NCHW norm over a convolution computed NHWC: the feature dimension maps
    # through the permutation.
    class _Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.Conv(4, (3, 3))(x).transpose(0, 3, 1, 2)
            return nn.BatchNorm(use_running_average=True, axis=1)(y)

    compared = fold_and_compare(_export(_Block(), (1, 6, 6, 3), seed=5), seed=6, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    assert (fold.linear, fold.through) == ("stablehlo.convolution", "stablehlo.transpose")


class _ClampBatchNorm(nn.Module):
    """Conv -> ReLU6 as `lax.clamp(0, y, 6)` (torch-mlir's and TF's form) -> BatchNorm."""

    @nn.compact
    def __call__(self, x):
        y = jax.lax.clamp(0.0, nn.Conv(4, (3, 3))(x), 6.0)
        return nn.BatchNorm(use_running_average=True)(y)


def test_a_batch_norm_after_relu6_folds_its_positive_scale_into_the_convolution():
    # clamp(lo, v, hi) * s + t = clamp(lo * s, v * s, hi * s) + t for s > 0: the clamp is
    # rebuilt with the scaled bounds, one add left behind it.
    text = _export(_ClampBatchNorm(), (1, 6, 6, 3), seed=7, negative=None)
    compared = fold_and_compare(text, seed=8, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    assert (fold.linear, fold.through) == ("stablehlo.convolution", "stablehlo.clamp")


def test_a_negative_gamma_after_relu6_is_refused_with_its_reason():
    text = _export(_ClampBatchNorm(), (1, 6, 6, 3), seed=9)
    compared = fold_and_compare(text, seed=10, batch_norms_left=0, folds=0)
    reasons = [s.reason for s in compared.report.skips if s.pattern == "fold_scale_through_relu"]
    assert reasons == [SCALE_NEGATIVE]


class _LeakyBatchNorm(nn.Module):
    """Dense -> `nn.leaky_relu` (`jax.nn.leaky_relu`, a call of a call) -> BatchNorm."""

    @nn.compact
    def __call__(self, x):
        return nn.BatchNorm(use_running_average=True)(nn.leaky_relu(nn.Dense(6)(x), 0.2))


def test_a_batch_norm_after_a_leaky_relu_folds_its_positive_scale_into_the_dense_layer():
    # leaky(v) * s + t = leaky(v * s) + t for s > 0, one add left behind the call.
    text = _export(_LeakyBatchNorm(), (2, 8), seed=11, negative=None)
    assert "call @leaky_relu(" in text
    compared = fold_and_compare(text, seed=12, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    assert (fold.linear, fold.through) == ("stablehlo.dot_general", "stablehlo.select")


def test_a_leaky_relu_with_a_symbolic_batch_lets_the_scale_through_too():
    # jax.export passes the dimension size first, to @leaky_relu and to @_where. XLA on
    # the CPU cannot run the symbolic shape assertion as text: the Exporteds run.
    exported = _exported(_LeakyBatchNorm(), ("b", 8), seed=13, negative=None)
    assert "call @leaky_relu(%arg0, " in exported.mlir_module()
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    (fold,) = report.folds
    assert fold.through == "stablehlo.select"
    x = np.random.default_rng(14).standard_normal((3, 8)).astype(np.float32)
    assert_close(np.asarray(exported.call(x)), np.asarray(folded.call(x)))


class _ConcatBatchNorm(nn.Module):
    """Inception-style branches: two convolutions concatenated along the features, an
    optional relu, then BatchNorm."""

    relu: bool = False

    @nn.compact
    def __call__(self, x):
        y = jnp.concatenate([nn.Conv(3, (3, 3))(x), nn.Conv(2, (1, 1), use_bias=False)(x)], axis=-1)
        return nn.BatchNorm(use_running_average=True)(nn.relu(y) if self.relu else y)


def test_a_batch_norm_after_a_concatenate_of_convolutions_folds_each_range_into_its_convolution():
    # concat(L1, L2) * s + t = concat(L1 * s[:3] + t[:3], L2 * s[3:] + t[3:]), any sign.
    text = _export(_ConcatBatchNorm(), (1, 6, 6, 2), seed=15)
    compared = fold_and_compare(text, seed=16, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    assert (fold.linear, fold.through) == ("stablehlo.convolution", "stablehlo.concatenate")
    main = compared.folded[compared.folded.index("func.func public @main"):]
    for name in ("stablehlo.multiply", "stablehlo.subtract"):
        assert name not in main, name


def test_a_relu_of_a_concatenate_lets_the_positive_scale_through_to_each_convolution():
    text = _export(_ConcatBatchNorm(relu=True), (1, 6, 6, 2), seed=17, negative=None)
    compared = fold_and_compare(text, seed=18, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    assert fold.through == "stablehlo.concatenate, stablehlo.maximum"


class _Relu6BatchNorm(nn.Module):
    """Dense -> `nn.relu6` (`jax.nn.relu6`, a call of minimum(maximum(v, 0), 6)) -> BatchNorm."""

    @nn.compact
    def __call__(self, x):
        return nn.BatchNorm(use_running_average=True)(nn.relu6(nn.Dense(6)(x)))


@pytest.mark.parametrize("batch", [2, "b"])
def test_a_batch_norm_after_jax_relu6_replaces_the_call_by_a_clamp_with_moved_bounds(batch):
    # relu6(v) * s + t = clamp(0, v * s, 6 * s) + t for s > 0: its bounds sit in the
    # callee, so the call becomes an inline clamp. XLA on the CPU cannot run a symbolic
    # shape assertion as text: the Exporteds run.
    exported = _exported(_Relu6BatchNorm(), (batch, 8), seed=19, negative=None)
    assert "call @relu6(" in exported.mlir_module()
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    (fold,) = report.folds
    assert (fold.linear, fold.through) == ("stablehlo.dot_general", "stablehlo.clamp")
    main = folded.mlir_module()[folded.mlir_module().index("func.func"):]
    assert "stablehlo.clamp" in main
    x = np.random.default_rng(20).standard_normal((2, 8)).astype(np.float32) * 4
    assert_close(np.asarray(exported.call(x)), np.asarray(folded.call(x)))


class _PoolBatchNorm(nn.Module):
    """Conv -> `nn.avg_pool` (a `reduce_window` add and a divide by the window's size), or
    the mean over H and W (a global average pool: a `reduce` add and a divide) -> BatchNorm."""

    pool: str = "valid"
    bias: bool = True

    @nn.compact
    def __call__(self, x):
        y = nn.Conv(4, (3, 3), use_bias=self.bias)(x)
        if self.pool == "mean":
            y = y.mean(axis=(1, 2))
        elif self.pool in ("same", "exclude"):
            y = nn.avg_pool(y, (3, 3), padding="SAME", count_include_pad=self.pool == "same")
        else:
            y = nn.avg_pool(y, (2, 2), (2, 2))
        return nn.BatchNorm(use_running_average=True)(y)


@pytest.mark.parametrize("pool", ["valid", "mean"])
def test_a_batch_norm_after_an_average_pool_or_mean_folds_whole_into_the_convolution(pool):
    # pool(v) / n * s + t = pool(v * s / n + t / n), any sign (gamma of channel 1 is
    # negative): the norm and the divide go into the kernel and the convolution's bias.
    text = _export(_PoolBatchNorm(pool), (1, 6, 6, 3), seed=21)
    compared = fold_and_compare(text, seed=22, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    through = "stablehlo.reduce" if pool == "mean" else "stablehlo.reduce_window"
    assert (fold.linear, fold.through) == ("stablehlo.convolution", through)
    assert not compared.report.skips
    main = compared.folded[compared.folded.index("func.func public @main"):]
    for name in ("stablehlo.multiply", "stablehlo.subtract", "stablehlo.divide"):
        assert name not in main, name


@pytest.mark.parametrize(
    ("pool", "bias", "reason"),
    [("same", True, SHIFT_KEPT_SUM), ("valid", False, COST_LARGER), ("exclude", True, SHIFT_KEPT_MAP)],
)
def test_a_batch_norm_after_a_padded_average_pool_or_without_a_bias_keeps_one_add(pool, bias, reason):
    # With padding a window at the edge adds fewer elements (t / n is no per-channel bias);
    # without a bias add, t / n would need a new add on the larger tensor; excluding the
    # padding, the pool divides by a count per position m, (v / m) * s = (v * s) / m but
    # t / m is not per-channel: the scale moves into the kernel, the shift stays behind
    # the pool as one add, and the report says why.
    text = _export(_PoolBatchNorm(pool, bias), (1, 6, 6, 3), seed=23)
    compared = fold_and_compare(text, seed=24, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    through = "stablehlo.reduce_window, stablehlo.divide" if pool == "exclude" else "stablehlo.reduce_window"
    assert fold.through == through
    assert [s.reason for s in compared.report.skips] == [reason]
    main = compared.folded[compared.folded.index("func.func public @main"):]
    for name in ("stablehlo.multiply", "stablehlo.subtract"):
        assert name not in main, name
    assert main.count("stablehlo.divide") == (1 if pool == "exclude" else 0)


class _SliceBatchNorm(nn.Module):
    """Conv -> a slice of its result (`index`: of the channels, as torch's chunk or split
    of a convolution's output, or of the rows) -> BatchNorm; `rest` also returns the
    channels after them (the other chunk)."""

    index: tuple
    bias: bool = True
    rest: bool = False

    @nn.compact
    def __call__(self, x):
        y = nn.Conv(6, (3, 3), use_bias=self.bias)(x)
        z = nn.BatchNorm(use_running_average=True)(y[self.index])
        return (z, y[..., 3:]) if self.rest else z


@pytest.mark.parametrize(
    "index",
    [(Ellipsis, slice(None, 3)), (Ellipsis, slice(1, None, 2)), (slice(None), slice(1, 5))],
    ids=["channels", "strided", "rows"],
)
def test_a_batch_norm_after_a_slice_of_a_convolution_folds_whole_into_it(index):
    # slice(v) * s + t = slice(v * s' + t'), s' and t' s and t on the channels the slice
    # keeps, 1 and 0 on the others (all of them for a crop): the whole norm goes into the
    # kernel and the convolution's bias, negative gamma included.
    text = _export(_SliceBatchNorm(index), (1, 6, 6, 3), seed=25)
    assert "stablehlo.slice" in text
    compared = fold_and_compare(text, seed=26, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    assert (fold.linear, fold.through) == ("stablehlo.convolution", "stablehlo.slice")
    assert not compared.report.skips
    main = compared.folded[compared.folded.index("func.func public @main"):]
    for name in ("stablehlo.multiply", "stablehlo.subtract"):
        assert name not in main, name
    assert main.count("stablehlo.add") == 1


@pytest.mark.parametrize(
    ("bias", "rest", "reason", "folds"), [(False, False, COST_LARGER, 1), (True, True, BIAS_ADD_USERS, 0)],
    ids=["no bias", "chunk"],
)
def test_a_batch_norm_after_a_slice_keeps_its_shift_without_a_bias_or_stays_beside_another_chunk(
    bias, rest, reason, folds
):
    # Without a bias add t' would need a new add on the convolution's larger result: the
    # scale moves, the shift stays behind the slice. With the other chunk also read, it
    # would see the scaled channels: nothing moves.
    module = _SliceBatchNorm((Ellipsis, slice(None, 3)), bias=bias, rest=rest)
    compared = fold_and_compare(_export(module, (1, 6, 6, 3), seed=27), seed=28, batch_norms_left=0, folds=folds)
    assert [s.reason for s in compared.report.skips if s.pattern == "fold_scale_through_relu"] == [reason]


def test_a_batch_norm_after_a_slice_of_a_dense_layer_with_weights_as_arguments_scales_them_in_the_graph():
    # Kernel and bias are parameters: the graph computes W * s' and b * s' + t', s' and t'
    # over all six channels of the Dense layer (1 and 0 on those the slice drops).
    norm = nn.BatchNorm(use_running_average=True)
    rng = np.random.default_rng(29)
    variables = {
        "params": {"scale": rng.uniform(0.5, 1.5, 3) * [1, -1, 1], "bias": rng.standard_normal(3)},
        "batch_stats": {"mean": rng.standard_normal(3), "var": rng.uniform(0.5, 1.5, 3)},
    }
    variables = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float32), variables)

    def block(kernel, bias, x):
        return norm.apply(variables, (x @ kernel + bias)[..., 2:5])

    specs = [jax.ShapeDtypeStruct(shape, np.float32) for shape in ((8, 6), (6,), (32, 8))]
    text = export.export(jax.jit(block))(*specs).mlir_module()
    compared = fold_and_compare(text, seed=30, batch_norms_left=0, folds=1)
    (fold,) = compared.report.folds
    assert (fold.linear, fold.through) == ("stablehlo.dot_general", "stablehlo.slice")


POOL_OF_PADDING_ALONE = """
func.func @main(%x: tensor<1x4x4x2xf32>) -> tensor<1x3x3x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -0.5, -0.25], [0.875, -0.875, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %lowest = stablehlo.constant dense<0xFF7FFFFF> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %lowest) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>, padding = dense<[[0, 0], [2, 0], [2, 0], [0, 0]]> : tensor<4x2xi64>} : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x3x3x3xf32>
  %s = stablehlo.constant dense<[0.5, 0.75, 0.25]> : tensor<3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xf32>) -> tensor<1x3x3x3xf32>
  %y = stablehlo.multiply %p, %sb : tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}
"""


def test_a_scale_after_a_lowest_init_max_pool_with_a_window_of_padding_alone_stays():
    # The first window reads padding alone: its maximum is the lowest finite value, times s
    # in the original. Folded into the kernel, the pool would give the lowest value itself
    # (relative error 1 on those outputs).
    compared = fold_and_compare(POOL_OF_PADDING_ALONE, seed=5, batch_norms_left=0, folds=0)
    assert "a window may hold only padding: the scale cannot pass it" in compared.report.to_text()
