"""Networks whose weights exist only in bf16 or f16 while their norms compute in f32 (Flax
with `dtype=param_dtype=bfloat16`: BatchNorm, LayerNorm and RMSNorm compute in f32 between
converts), folded with `fold-narrow-weights` (the default): W * s computed in float64 from
the narrow weights and rounded to their type again, as the all-f16 case does.

The cost of that second rounding, measured: against a float64 evaluation of the same
model (the same Flax module with `dtype=param_dtype=float64`, its parameters the narrow
ones widened exactly, on the same input widened exactly, under `jax.enable_x64`), the
folded model's relative error is at most 1.5 times the original's own. docs/networks.md
states the figures.
"""

from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import export

import stablehlo_bnfold
from stablehlo_bnfold.fold import reasons
from stablehlo_bnfold.verification import run_on_cpu

pytestmark = pytest.mark.networks

BATCH = 16


class ResNet(nn.Module):
    """A stem convolution and two basic blocks (conv -> BN -> relu -> conv -> BN, plus the
    skip), a global average pool and a Dense classifier."""

    dtype: object

    @nn.compact
    def __call__(self, x):
        conv = functools.partial(nn.Conv, use_bias=False, dtype=self.dtype, param_dtype=self.dtype)
        bn = functools.partial(
            nn.BatchNorm, use_running_average=True, dtype=self.dtype, param_dtype=self.dtype
        )
        x = nn.relu(bn()(conv(8, (3, 3))(x)))
        for _ in range(2):
            h = nn.relu(bn()(conv(8, (3, 3))(x)))
            x = nn.relu(x + bn()(conv(8, (3, 3))(h)))
        return nn.Dense(4, dtype=self.dtype, param_dtype=self.dtype)(jnp.mean(x, axis=(1, 2)))


class ViTBlock(nn.Module):
    """x + attention(LayerNorm(x)), then x + MLP(LayerNorm(x)), with Flax's attention."""

    dtype: object

    @nn.compact
    def __call__(self, x):
        kw = {"dtype": self.dtype, "param_dtype": self.dtype}
        h = nn.LayerNorm(**kw)(x)
        x = x + nn.MultiHeadDotProductAttention(num_heads=2, **kw)(h, h)
        h = nn.Dense(4 * x.shape[-1], **kw)(nn.LayerNorm(**kw)(x))
        return x + nn.Dense(x.shape[-1], **kw)(nn.gelu(h))


class LlamaBlock(nn.Module):
    """x + attention(RMSNorm(x)) with bias-free projections, then x + SwiGLU(RMSNorm(x))."""

    dtype: object

    @nn.compact
    def __call__(self, x):
        kw = {"dtype": self.dtype, "param_dtype": self.dtype, "use_bias": False}
        b, t, d = x.shape
        h = nn.RMSNorm(dtype=self.dtype, param_dtype=self.dtype)(x)
        q, k, v = (nn.Dense(d, **kw)(h).reshape(b, t, 2, d // 2) for _ in range(3))
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d // 2).astype(q.dtype)
        attention = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(logits, -1), v)
        x = x + nn.Dense(d, **kw)(attention.reshape(b, t, d))
        h = nn.RMSNorm(dtype=self.dtype, param_dtype=self.dtype)(x)
        return x + nn.Dense(d, **kw)(nn.silu(nn.Dense(24, **kw)(h)) * nn.Dense(24, **kw)(h))


class RepVGG(nn.Module):
    """A stem convolution, then two RepVGG blocks (BN(conv3x3) + BN(conv1x1) + BN(x),
    relu), a global average pool and a Dense classifier: its branches merge."""

    dtype: object

    @nn.compact
    def __call__(self, x):
        conv = functools.partial(nn.Conv, 8, use_bias=False, dtype=self.dtype, param_dtype=self.dtype)
        bn = functools.partial(
            nn.BatchNorm, use_running_average=True, dtype=self.dtype, param_dtype=self.dtype
        )
        x = nn.relu(bn()(conv((3, 3))(x)))
        for _ in range(2):
            y = bn()(conv((3, 3), padding=1)(x)) + bn()(conv((1, 1), padding=0)(x))
            x = nn.relu(y + bn()(x))
        return nn.Dense(4, dtype=self.dtype, param_dtype=self.dtype)(jnp.mean(x, axis=(1, 2)))


NETWORKS = {
    "resnet": (ResNet, (8, 8, 3)), "vit": (ViTBlock, (8, 16)), "llama": (LlamaBlock, (8, 16)),
    "repvgg": (RepVGG, (8, 8, 3)),
}
DTYPES = {"bf16": jnp.bfloat16, "f16": jnp.float16}

# name: (folds, of them rounded again, skips) with fold-narrow-weights (the default), and
# the folds with it off. ResNet: its 5 BatchNorms into the convolutions before them and
# the average pool's divide (in f32) into the classifier. ViT: both LayerNorms' scales
# into the Dense layers after them, their shifts kept in f32 before the convert as x + t /
# s (2 skips saying so), and attention's two scalings (f32 nowhere: no rounding again).
# LLaMA: both RMSNorm scales; attention's 1 / sqrt(d) stays (k is an activation).
# RepVGG: its 5 branch BatchNorms into their convolutions, the pool's divide, then each
# block's 3x3, 1x1 and identity merged into one convolution (the identity norm's 3 ops
# folded, its scale rounded into the bf16 / f16 kernel with the sum): 1.20x / 0.96x the
# original's error.
EXPECTED = {"resnet": (6, 6, 0, 0), "vit": (4, 2, 2, 2), "llama": (2, 2, 1, 0), "repvgg": (12, 12, 0, 0)}


def _variables(name: str, dtype, seed: int = 0):
    """Every parameter and statistic drawn from one seeded generator, in the narrow type:
    kernels N(0, 1 / fan_in), means and shifts N(0, 0.2²), variances U(0.5, 1.5), scales
    U(0.5, 1.5) with a random sign."""
    cls, shape = NETWORKS[name]
    shapes = jax.eval_shape(
        cls(dtype).init, jax.random.PRNGKey(0), jax.ShapeDtypeStruct((1, *shape), np.float32)
    )
    rng = np.random.default_rng(seed)

    def draw(path, leaf):
        key = jax.tree_util.keystr(path)
        if "kernel" in key:
            values = rng.standard_normal(leaf.shape) / np.sqrt(np.prod(leaf.shape[:-1]))
        elif "var" in key:
            values = rng.uniform(0.5, 1.5, leaf.shape)
        elif "scale" in key:
            values = rng.uniform(0.5, 1.5, leaf.shape) * rng.choice([-1, 1], leaf.shape)
        else:
            values = rng.normal(0, 0.2, leaf.shape)
        return np.asarray(values, leaf.dtype)

    return jax.tree_util.tree_map_with_path(draw, shapes)


def _exported(name: str, dtype_name: str) -> tuple[str, np.ndarray, np.ndarray]:
    """The network's MLIR with its narrow variables as constants, a seeded input in the
    narrow type, and the float64 evaluation of the same model on it."""
    cls, shape = NETWORKS[name]
    dtype = DTYPES[dtype_name]
    variables = _variables(name, dtype)
    spec = jax.ShapeDtypeStruct((BATCH, *shape), dtype)
    text = export.export(jax.jit(lambda x: cls(dtype).apply(variables, x)))(spec).mlir_module()
    x = np.random.default_rng(1).standard_normal((BATCH, *shape)).astype(dtype)
    with jax.enable_x64(True):
        wide = jax.tree.map(lambda a: jnp.asarray(np.asarray(a, np.float64)), variables)
        apply = jax.jit(lambda x: cls(jnp.float64).apply(wide, x))
        reference = np.asarray(apply(jnp.asarray(x.astype(np.float64))))
    assert reference.dtype == np.float64
    return text, x, reference


def _error(reference: np.ndarray, output: np.ndarray) -> float:
    """||output - reference|| / ||reference||, in float64."""
    output = np.asarray(output, np.float64)
    return float(np.linalg.norm(output - reference) / np.linalg.norm(reference))


@pytest.mark.parametrize("dtype_name", sorted(DTYPES))
@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_a_network_folded_into_narrow_weights_stays_within_1_5x_the_originals_float64_error(
    name, dtype_name
):
    text, x, reference = _exported(name, dtype_name)
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    folds, rounded, skips, _ = EXPECTED[name]
    assert (report.folded, len(report.skips)) == (folds, skips), report.to_text()
    assert sum(f.rounded_again == dtype_name for f in report.folds) == rounded
    (original,) = run_on_cpu(text, [x])
    (after,) = run_on_cpu(folded, [x])
    before, now = _error(reference, original), _error(reference, after)
    assert before > 0
    assert now <= 1.5 * before, f"folded {now:.3g} against the original's {before:.3g}"


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_fold_narrow_weights_false_keeps_the_refusal(name):
    text, _, _ = _exported(name, "bf16")
    options = "fold-narrow-weights=false"
    _, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True, options=options)
    assert report.folded == EXPECTED[name][3], report.to_text()
    assert not any(f.rounded_again for f in report.folds)
    assert str(reasons.NO_MASTER_WEIGHTS) in {s.reason for s in report.skips}


def _rounded_once_bf16(values: np.ndarray) -> np.ndarray:
    """Each float64 value rounded to the nearest bf16, ties to even, written out: the two
    bf16 values around it (its float32 bits truncated toward zero, and the next one away
    from zero) and the nearer of them."""
    below = (values.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)
    below = np.where(np.abs(below.astype(np.float64)) > np.abs(values), np.nextafter(below, 0), below)
    below = (below.view(np.uint32) & 0xFFFF0000).view(np.float32)
    above = (below.view(np.uint32) + 0x10000).view(np.float32)
    low, high = np.abs(values - below), np.abs(above.astype(np.float64) - values)
    even = (below.view(np.uint32) >> 16) % 2 == 0
    pick_below = (low < high) | ((low == high) & even)
    return np.where(pick_below, below, above).astype(ml_dtypes.bfloat16)


def test_narrow_weights_are_w_times_s_in_float64_rounded_once_to_bf16_bit_for_bit():
    rng = np.random.default_rng(7)
    kernel = rng.standard_normal((2, 5)).astype(ml_dtypes.bfloat16)
    scale = rng.uniform(0.3, 3.0, 5).astype(np.float32)  # no power of two
    text = f"""
func.func @main(%arg0: tensor<3x2xbf16>) -> tensor<3x5xbf16> {{
  %k = stablehlo.constant dense<{np.asarray(kernel, np.float32).tolist()}> : tensor<2x5xbf16>
  %s = stablehlo.constant dense<{scale.tolist()}> : tensor<5xf32>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [1] x [0] : (tensor<3x2xbf16>, tensor<2x5xbf16>) -> tensor<3x5xbf16>
  %df = stablehlo.convert %d : (tensor<3x5xbf16>) -> tensor<3x5xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<5xf32>) -> tensor<3x5xf32>
  %n = stablehlo.multiply %df, %sb : tensor<3x5xf32>
  %y = stablehlo.convert %n : (tensor<3x5xf32>) -> tensor<3x5xbf16>
  return %y : tensor<3x5xbf16>
}}"""
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    assert [f.rounded_again for f in report.folds] == ["bf16"]
    # The folded kernel is the dot_general's only operand that is not the input: read it
    # back by running the module on the identity-like input e_0 and e_1.
    eye = np.eye(3, 2).astype(ml_dtypes.bfloat16)
    (rows,) = run_on_cpu(folded, [eye])
    expected = _rounded_once_bf16(np.asarray(kernel, np.float64) * scale.astype(np.float64))
    assert rows[:2].view(np.uint16).tolist() == expected.view(np.uint16).tolist()
