"""A norm before a linear op whose data lie far from zero against their spread (a running
mean of 2, a variance of 1e-4): folded whole into the layer after it, conv(x, K * s) +
L(t, K) sums terms |mean| / sqrt(var + eps) times the norm's result and cancels them with
the bias, where the original subtracts the mean first. Each module runs in f32 through XLA
on the CPU, original and folded, against the same module in f64 on the same input: the
folded error stays within 1.5 times the original's own (`CANCELLATION_BOUND`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

import stablehlo_bnfold
from stablehlo_bnfold.fold import reasons
from stablehlo_bnfold.verification import run_on_cpu

C, O, N, H, W = 16, 8, 4, 10, 10
EPSILON = 1e-5


def _dense(values: np.ndarray, element: str) -> str:
    """A dense constant of `values`, each written as the exact float64 value of its f32
    rounding: the f64 module reads the f32 module's constants exactly."""
    values = np.asarray(values, np.float32).astype(np.float64)

    def nested(a: np.ndarray) -> str:
        return repr(float(a)) if a.ndim == 0 else "[" + ", ".join(nested(b) for b in a) + "]"

    return f"dense<{nested(values)}> : tensor<{'x'.join(map(str, values.shape))}x{element}>"


def _module(form: str, relu: bool, stats: tuple[np.ndarray, ...], kernel: np.ndarray, element: str) -> str:
    """A norm of x (NCHW, feature 1) as `form` ("batch_norm_inference", or "decomposed":
    (x - mean) * rsqrt(var + eps) * gamma + beta, as torch-mlir writes BatchNorm2d), a
    relu when `relu`, a transpose to NHWC and a 3x3 convolution."""
    def t(shape: str) -> str:
        return f"tensor<{shape}x{element}>"

    nchw, vector = t(f"{N}x{C}x{H}x{W}"), t(str(C))
    names = ("gamma", "beta", "mean", "var")
    lines = [f"func.func @main(%x: {nchw}) -> {t(f'{N}x{H - 2}x{W - 2}x{O}')} {{"]
    lines += [f"  %{n} = stablehlo.constant {_dense(v, element)}" for n, v in zip(names, stats)]
    if form == "batch_norm_inference":
        lines.append(
            f'  %bn = "stablehlo.batch_norm_inference"(%x, %gamma, %beta, %mean, %var) '
            f"{{epsilon = {EPSILON:e} : f32, feature_index = 1 : i64}} : "
            f"({nchw}, {vector}, {vector}, {vector}, {vector}) -> {nchw}"
        )
    else:
        lines.append(f"  %eps = stablehlo.constant {_dense(np.full(C, EPSILON), element)}")
        lines.append(f"  %ve = stablehlo.add %var, %eps : {vector}")
        lines.append(f"  %inv = stablehlo.rsqrt %ve : {vector}")
        for n in ("mean", "inv", "gamma", "beta"):
            lines.append(f"  %{n}_b = stablehlo.broadcast_in_dim %{n}, dims = [1] : ({vector}) -> {nchw}")
        lines.append(f"  %centred = stablehlo.subtract %x, %mean_b : {nchw}")
        lines.append(f"  %normed = stablehlo.multiply %centred, %inv_b : {nchw}")
        lines.append(f"  %scaled = stablehlo.multiply %normed, %gamma_b : {nchw}")
        lines.append(f"  %bn = stablehlo.add %scaled, %beta_b : {nchw}")
    data = "%bn"
    if relu:
        lines.append(f"  %zero = stablehlo.constant dense<0.0> : {nchw}")
        lines.append(f"  %relu = stablehlo.maximum %bn, %zero : {nchw}")
        data = "%relu"
    nhwc = t(f"{N}x{H}x{W}x{C}")
    lines.append(f"  %nhwc = stablehlo.transpose {data}, dims = [0, 2, 3, 1] : ({nchw}) -> {nhwc}")
    lines.append(f"  %k = stablehlo.constant {_dense(kernel, element)}")
    lines.append(
        f"  %y = stablehlo.convolution(%nhwc, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
        f"window = {{}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : "
        f"({nhwc}, {t(f'3x3x{C}x{O}')}) -> {t(f'{N}x{H - 2}x{W - 2}x{O}')}"
    )
    lines += [f"  return %y : {t(f'{N}x{H - 2}x{W - 2}x{O}')}", "}"]
    return "\n".join(lines)


def _folded_against_float64(form: str, relu: bool, mean: float, var: float, seed: int):
    """(original's error, folded's error, report): each ||y - y64|| / ||y64||, x drawn
    with the norm's own statistics (per channel mean about `mean`, of either sign, and
    variance about `var`)."""
    rng = np.random.default_rng(seed)
    means = mean * rng.uniform(0.5, 1.5, C) * rng.choice([-1, 1], C)
    variances = var * rng.uniform(0.5, 1.5, C)
    stats = (rng.uniform(0.5, 1.5, C), rng.normal(0, 0.5, C), means, variances)
    stats = tuple(np.asarray(v, np.float32) for v in stats)
    kernel = np.asarray(rng.standard_normal((3, 3, C, O)) / np.sqrt(9 * C), np.float32)
    spread = np.sqrt(stats[3])[None, :, None, None]
    x = np.asarray(stats[2][None, :, None, None] + spread * rng.standard_normal((N, C, H, W)), np.float32)
    text = _module(form, relu, stats, kernel, "f32")
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    (reference,) = run_on_cpu(_module(form, relu, stats, kernel, "f64"), [x.astype(np.float64)])
    (original,) = run_on_cpu(text, [x])
    (after,) = run_on_cpu(folded, [x])

    def error(y: np.ndarray) -> float:
        return float(np.linalg.norm(y.astype(np.float64) - reference) / np.linalg.norm(reference))

    return error(original), error(after), report


CASES = {
    # (form, relu): the reason noted at what stays in front.
    ("decomposed", False): reasons.CENTRING_KEPT,
    ("decomposed", True): reasons.CENTRING_KEPT,
    ("batch_norm_inference", False): reasons.SHIFT_KEPT_CANCELS,
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(("form", "relu"), sorted(CASES))
def test_a_norm_far_from_zero_folds_within_1_5x_the_originals_float64_error(form, relu, seed):
    before, now, report = _folded_against_float64(form, relu, mean=2.0, var=1e-4, seed=seed)
    assert now <= 1.5 * before, f"folded {now:.3g} against the original's {before:.3g}"
    assert report.folded == 1, report.to_text()
    assert str(CASES[form, relu]) in {s.reason for s in report.skips}, report.to_text()


@pytest.mark.parametrize("form", ["decomposed", "batch_norm_inference"])
def test_a_norm_near_zero_still_folds_whole(form):
    before, now, report = _folded_against_float64(form, False, mean=0.2, var=1.0, seed=0)
    assert report.folded == 1 and not report.skips, report.to_text()
    assert now <= 1.5 * before, f"folded {now:.3g} against the original's {before:.3g}"


def _norm_then_convolution(x, stats, kernel):
    """(x - mean) * (rsqrt(var + eps) * gamma) + beta, as Flax's BatchNorm computes it, then
    a 3x3 convolution (NHWC), in the type of `x`."""
    gamma, beta, mean, var = stats
    y = (x - mean) * (jax.lax.rsqrt(var + EPSILON) * gamma) + beta
    return jax.lax.conv_general_dilated(y, kernel, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def test_a_norm_far_from_zero_with_a_symbolic_batch_keeps_its_centring():
    # With a symbolic batch jax broadcasts rsqrt(var + eps) * gamma with
    # dynamic_broadcast_in_dim: the spread is read through it as through broadcast_in_dim.
    rng = np.random.default_rng(2)
    means = 2.0 * rng.uniform(0.5, 1.5, C) * rng.choice([-1, 1], C)
    stats = (rng.uniform(0.5, 1.5, C), rng.normal(0, 0.5, C), means, 1e-4 * rng.uniform(0.5, 1.5, C))
    stats = tuple(np.asarray(v, np.float32) for v in stats)
    kernel = np.asarray(rng.standard_normal((3, 3, C, O)) / np.sqrt(9 * C), np.float32)
    spec = jax.ShapeDtypeStruct((*export.symbolic_shape("b"), H, W, C), jnp.float32)
    exported = export.export(jax.jit(lambda x: _norm_then_convolution(x, stats, kernel)))(spec)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    x = np.asarray(means + np.sqrt(stats[3]) * rng.standard_normal((N, H, W, C)), np.float32)
    with jax.enable_x64(True):
        wide = tuple(jnp.asarray(v, jnp.float64) for v in stats)
        wide_x, wide_kernel = jnp.asarray(x, jnp.float64), jnp.asarray(kernel, jnp.float64)
        reference = np.asarray(_norm_then_convolution(wide_x, wide, wide_kernel))

    def error(y) -> float:
        return float(np.linalg.norm(np.asarray(y, np.float64) - reference) / np.linalg.norm(reference))

    before, now = error(exported.call(x)), error(folded.call(x))
    assert now <= 1.5 * before, f"folded {now:.3g} against the original's {before:.3g}"
    assert report.folded == 1 and str(reasons.CENTRING_KEPT) in {s.reason for s in report.skips}, report.to_text()


def _scaled_first(text: str, element: str) -> str:
    """`text` (a decomposed norm of `_module`) with x multiplied by 0.5 per channel before
    the norm subtracts its mean (an input scaled before a norm)."""
    half = f"  %half = stablehlo.constant {_dense(np.full(C, 0.5), element)}\n"
    nchw = f"tensor<{N}x{C}x{H}x{W}x{element}>"
    scaled = (
        f"  %half_b = stablehlo.broadcast_in_dim %half, dims = [1] : (tensor<{C}x{element}>) -> {nchw}\n"
        f"  %xs = stablehlo.multiply %x, %half_b : {nchw}\n"
    )
    centring = "  %centred = stablehlo.subtract %x, %mean_b"
    assert centring in text
    return text.replace(centring, half + scaled + centring.replace("%x,", "%xs,"))


def test_a_centring_kept_in_front_is_no_step_of_a_later_chain():
    # x * a -> (. - mean) * rsqrt(var + eps) * gamma + beta -> relu -> conv: the first fold
    # keeps the subtract and x' + t / s in front of the relu; the chain a later fold finds,
    # x * a - mean + t / s, holds the kept subtract, and folded it would cancel again.
    rng = np.random.default_rng(3)
    means = 2.0 * rng.uniform(0.5, 1.5, C) * rng.choice([-1, 1], C)
    stats = (rng.uniform(0.5, 1.5, C), rng.normal(0, 0.5, C), means, 1e-4 * rng.uniform(0.5, 1.5, C))
    stats = tuple(np.asarray(v, np.float32) for v in stats)
    kernel = np.asarray(rng.standard_normal((3, 3, C, O)) / np.sqrt(9 * C), np.float32)
    spread = np.sqrt(stats[3])[None, :, None, None]
    x = np.asarray(2.0 * (stats[2][None, :, None, None] + spread * rng.standard_normal((N, C, H, W))), np.float32)
    text = _scaled_first(_module("decomposed", True, stats, kernel, "f32"), "f32")
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    wide = _scaled_first(_module("decomposed", True, stats, kernel, "f64"), "f64")
    (reference,) = run_on_cpu(wide, [x.astype(np.float64)])

    def error(y: np.ndarray) -> float:
        return float(np.linalg.norm(y.astype(np.float64) - reference) / np.linalg.norm(reference))

    before, now = error(run_on_cpu(text, [x])[0]), error(run_on_cpu(folded, [x])[0])
    assert now <= 1.5 * before, f"folded {now:.3g} against the original's {before:.3g}\n{report.to_text()}"
    assert str(reasons.CENTRING_KEPT) in {s.reason for s in report.skips}, report.to_text()
