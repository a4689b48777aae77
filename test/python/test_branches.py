"""Parallel convolution branches merged into one convolution (fold/branches.py): the merged
kernel and bias of RepVGG, MobileOne, ACNet and RT-DETR blocks exported from Flax equal
their authors' re-parameterization (numpy ports of RepVGG's `get_equivalent_kernel_bias`
and MobileOne's `_get_kernel_bias`, on the blocks' parameters in torch's layout) within a
few f32 roundings of the terms, and the merged block computes what the original computes
through XLA on the CPU. test/transforms/branches.mlir checks each identity and refusal."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from helpers import assert_close
from jax import export
from jaxlib.mlir import ir
from networks import ACBlock, MobileOneBlock, RepVGGBlock, _flax_variables

import stablehlo_bnfold
from stablehlo_bnfold.constants import read_dense
from stablehlo_bnfold.io import make_context

EPSILON = 1e-5
"""Flax's BatchNorm epsilon (the default), which the ports use as torch's."""

SHAPE = (1, 8, 8, 8)


# --- the authors' re-parameterization, ported to numpy (torch layout: OIHW kernels) -----


def fuse_bn(kernel: np.ndarray, bn: dict) -> tuple[np.ndarray, np.ndarray]:
    """RepVGG's `_fuse_bn_tensor` for a convolution branch: kernel * gamma / std and
    beta - mean * gamma / std, std = sqrt(var + eps)."""
    std = np.sqrt(bn["var"] + EPSILON)
    t = bn["scale"] / std
    return kernel * t.reshape(-1, 1, 1, 1), bn["bias"] - bn["mean"] * t


def identity_kernel(channels: int, groups: int, size: int) -> np.ndarray:
    """RepVGG's and MobileOne's identity as a kernel: kernel[i, i % (C / groups), centre] = 1."""
    input_dim = channels // groups
    kernel = np.zeros((channels, input_dim, size, size))
    for i in range(channels):
        kernel[i, i % input_dim, size // 2, size // 2] = 1
    return kernel


def pad_to(kernel: np.ndarray, size: int) -> np.ndarray:
    """A smaller kernel centred in a size x size one (`torch.nn.functional.pad`)."""
    top = (size - kernel.shape[2]) // 2
    left = (size - kernel.shape[3]) // 2
    return np.pad(kernel, ((0, 0), (0, 0), (top, size - kernel.shape[2] - top), (left, size - kernel.shape[3] - left)))


def repvgg_equivalent_kernel_bias(k3, bn3, k1, bn1, bn_id, groups=1):
    """RepVGG's `get_equivalent_kernel_bias`: 3x3 + padded 1x1 + identity, each BN-fused."""
    kernel3, bias3 = fuse_bn(k3, bn3)
    kernel1, bias1 = fuse_bn(k1, bn1)
    kernel, bias = kernel3 + pad_to(kernel1, 3), bias3 + bias1
    if bn_id is not None:
        kernel_id, bias_id = fuse_bn(identity_kernel(k3.shape[0], groups, 3), bn_id)
        kernel, bias = kernel + kernel_id, bias + bias_id
    return kernel, bias


def mobileone_kernel_bias(convs, scale, skip, groups, size=3):
    """MobileOne's `_get_kernel_bias`: the scale branch padded (a kxk block has one), the
    identity, the k convs."""
    kernel_scale, bias_scale = fuse_bn(*scale) if scale is not None else (0, 0)
    kernel_scale = pad_to(kernel_scale, size) if scale is not None else 0
    channels = convs[0][0].shape[0]
    kernel_id, bias_id = fuse_bn(identity_kernel(channels, groups, size), skip)
    kernel_conv, bias_conv = 0, 0
    for conv in convs:
        k, b = fuse_bn(*conv)
        kernel_conv, bias_conv = kernel_conv + k, bias_conv + b
    return kernel_conv + kernel_scale + kernel_id, bias_conv + bias_scale + bias_id


# --- the blocks, exported and folded ----------------------------------------------------


def _export(block: nn.Module, seed: int = 0):
    spec = jax.ShapeDtypeStruct(SHAPE, np.float32)
    variables = _flax_variables(jax.eval_shape(block.init, jax.random.PRNGKey(0), spec), seed)
    exported = export.export(jax.jit(lambda x: block.apply(variables, x)))(spec)
    return variables, exported


def _branch(variables, conv: str | None, bn: str) -> tuple:
    """A branch's kernel (HWIO -> OIHW) and batch norm, in float64; the batch norm alone
    for an identity branch (`conv` None)."""
    params, stats = variables["params"], variables["batch_stats"]
    norm = {k: np.asarray(v, np.float64) for k, v in {**params[bn], **stats[bn]}.items()}
    if conv is None:
        return norm
    return np.asarray(params[conv]["kernel"], np.float64).transpose(3, 2, 0, 1), norm


def _convolutions(exported) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Each convolution's kernel (OIHW) and the bias its bias add broadcasts, in order."""
    found = []
    with make_context():
        module = ir.Module.parse(exported.mlir_module())

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "stablehlo.convolution":
                kernel = np.array(read_dense(op.operands[1].owner.opview.value), np.float64)
                users = [use.owner for use in op.results[0].uses]
                bias = None
                if len(users) == 1 and users[0].name == "stablehlo.add":
                    broadcast = users[0].operands[1].owner
                    bias = np.array(read_dense(broadcast.operands[0].owner.opview.value), np.float64)
                found.append((kernel.transpose(3, 2, 0, 1), bias))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
    return found


def _folded(block: nn.Module, convolutions: int):
    """The block's variables, the folded block's convolutions (as many as `convolutions`),
    its report; the folded block computes what the original computes."""
    variables, exported = _export(block)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    found = _convolutions(folded)
    assert len(found) == convolutions, report.to_text()
    x = np.random.default_rng(5).normal(size=SHAPE).astype(np.float32)
    assert_close(np.asarray(exported.call(x)), np.asarray(folded.call(x)))
    assert report.summary()["left"] == 0
    return variables, found, report


def _assert_within_roundings(actual, reference, terms: int) -> None:
    """Equal within one f32 rounding per term summed, at the scale of the largest value."""
    for a, r in zip(actual, reference):
        assert np.abs(a - r).max() <= terms * np.finfo(np.float32).eps * np.abs(r).max()


@pytest.mark.parametrize("strides", [1, 2])
def test_a_repvgg_block_is_one_convolution_with_the_authors_kernel_and_bias(strides):
    variables, (merged,), report = _folded(RepVGGBlock(8, strides=strides), 1)
    identity = _branch(variables, None, "BatchNorm_2") if strides == 1 else None
    reference = repvgg_equivalent_kernel_bias(
        *_branch(variables, "Conv_0", "BatchNorm_0"), *_branch(variables, "Conv_1", "BatchNorm_1"), identity
    )
    _assert_within_roundings(merged, reference, 3)
    assert [(m.branches, m.reason) for m in report.merges] == [(3 if strides == 1 else 2, "")]


def test_rt_detr_s_rep_vgg_block_with_silu_is_one_convolution():
    variables, (merged,), _ = _folded(RepVGGBlock(8, identity=False, act=nn.silu), 1)
    reference = repvgg_equivalent_kernel_bias(
        *_branch(variables, "Conv_0", "BatchNorm_0"), *_branch(variables, "Conv_1", "BatchNorm_1"), None
    )
    _assert_within_roundings(merged, reference, 3)


def test_a_mobileone_block_is_a_depthwise_and_a_pointwise_convolution_with_the_authors_values():
    variables, (depthwise, pointwise), report = _folded(MobileOneBlock(8, k=2), 2)
    b = lambda conv, bn: _branch(variables, conv, bn)  # noqa: E731
    reference = mobileone_kernel_bias(
        [b("Conv_1", "BatchNorm_2"), b("Conv_2", "BatchNorm_3")], b("Conv_0", "BatchNorm_1"),
        b(None, "BatchNorm_0"), groups=8,
    )
    _assert_within_roundings(depthwise, reference, 4)
    reference = mobileone_kernel_bias(
        [b("Conv_3", "BatchNorm_5"), b("Conv_4", "BatchNorm_6")], None, b(None, "BatchNorm_4"), groups=1, size=1
    )
    _assert_within_roundings(pointwise, reference, 3)
    assert [m.branches for m in report.merges] == [4, 3]


def test_an_acnet_block_is_one_3x3_convolution_with_the_asymmetric_kernels_added():
    variables, (merged,), _ = _folded(ACBlock(8), 1)
    kernel, bias = 0, 0
    for conv, bn in (("Conv_0", "BatchNorm_0"), ("Conv_1", "BatchNorm_1"), ("Conv_2", "BatchNorm_2")):
        k, b = fuse_bn(*_branch(variables, conv, bn))
        kernel, bias = kernel + pad_to(k, 3), bias + b
    _assert_within_roundings(merged, (kernel, bias), 3)


def _fused_as_flax(kernel: np.ndarray, bn: dict) -> tuple[np.ndarray, np.ndarray]:
    """`fuse_bn` as Flax's batch norm computes its factor, `scale * rsqrt(var + eps)` with
    eps an f32 constant, in float64."""
    t = bn["scale"] * (1.0 / np.sqrt(bn["var"] + float(np.float32(EPSILON))))
    return kernel * t.reshape(-1, 1, 1, 1), bn["bias"] - bn["mean"] * t


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_merged_kernels_and_biases_are_the_branches_folds_summed_in_float64_and_rounded_once(seed):
    # Each branch's fold rounds its kernel and bias to f32; the merge sums what those were
    # rounded from, so the merged values are the float64 re-parameterization rounded once
    # (summing the rounded ones left about 20 of 576 kernel elements and 2 of 8 biases one
    # ulp off).
    variables, exported = _export(RepVGGBlock(8), seed)
    ((merged_kernel, merged_bias),) = _convolutions(stablehlo_bnfold.fold_batch_norm(exported))
    k3, b3 = _fused_as_flax(*_branch(variables, "Conv_0", "BatchNorm_0"))
    k1, b1 = _fused_as_flax(*_branch(variables, "Conv_1", "BatchNorm_1"))
    kid, bid = _fused_as_flax(identity_kernel(8, 1, 3), _branch(variables, None, "BatchNorm_2"))
    np.testing.assert_array_equal(merged_kernel.astype(np.float32), (k3 + pad_to(k1, 3) + kid).astype(np.float32))
    np.testing.assert_array_equal(merged_bias.astype(np.float32), (b3 + b1 + bid).astype(np.float32))


def test_a_bug_in_the_merge_fails_the_pass_at_the_sum_and_keeps_the_process(monkeypatch):
    # What the greedy driver's adapter does for a pattern that raises: the pass fails with
    # the error at the op, nothing half-built is returned, the caller's process goes on.
    from stablehlo_bnfold.fold import branches

    def broken(members, merged, add, rw):
        rw.constant(np.zeros(1, np.float32), ir.RankedTensorType.get([1], ir.F32Type.get()), add.location)
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(branches, "_merged_sum", broken)
    _, exported = _export(RepVGGBlock(8))
    with pytest.raises(stablehlo_bnfold.FoldError, match="merge_parallel_branches: RuntimeError: broken on purpose"):
        stablehlo_bnfold.fold_batch_norm(exported.mlir_module())
    monkeypatch.undo()
    assert stablehlo_bnfold.fold_batch_norm(exported.mlir_module()).count("stablehlo.convolution") == 1


@pytest.mark.parametrize("block, convolutions", [(RepVGGBlock(8), 1), (MobileOneBlock(8), 2), (ACBlock(8), 1)])
def test_blocks_with_weights_as_arguments_merge_in_the_graph_and_compute_the_same(block, convolutions):
    spec = jax.ShapeDtypeStruct((1, 16, 16, 8), np.float32)
    variables = _flax_variables(jax.eval_shape(block.init, jax.random.PRNGKey(0), spec), seed=1)
    exported = export.export(jax.jit(block.apply))(variables, spec)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    assert folded.mlir_module().count("stablehlo.convolution(") == convolutions, report.to_text()
    x = np.random.default_rng(2).normal(size=spec.shape).astype(np.float32)
    assert_close(np.asarray(exported.call(variables, x)), np.asarray(folded.call(variables, x)))
    prepare, once = stablehlo_bnfold.fold_parameters(exported, parameters=0)
    assert once.mlir_module().count("stablehlo.convolution(") == convolutions
    assert_close(np.asarray(exported.call(variables, x)), np.asarray(once.call(prepare.call(variables), x)))


def test_the_benchmark_measures_a_stage_merged_and_kept():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "branches.py"
    spec = importlib.util.spec_from_file_location("branches_benchmark", path)
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    row = benchmark.measure("repvgg", blocks=1, channels=8, size=8, rounds=1, inner=1)
    counts = (row["original_convolutions"], row["folded_convolutions"], row["merged_convolutions"])
    assert counts == (2, 2, 1)
    assert row["merged_max_rel_difference"] < 1e-5


def test_mixed_precision_weights_as_arguments_are_summed_in_their_master_type_and_rounded_once():
    # Flax's dtype=bfloat16 with float32 parameters: each kernel is convert(W_f32 * s); the
    # merged one is convert(W3 * s3 + pad(W1 * s1)), one rounding to bf16, not two.
    block = RepVGGBlock(8, dtype=jnp.bfloat16)
    spec = jax.ShapeDtypeStruct((1, 16, 16, 8), np.float32)
    variables = _flax_variables(jax.eval_shape(block.init, jax.random.PRNGKey(0), spec), seed=1)
    exported = export.export(jax.jit(block.apply))(variables, spec)
    folded = stablehlo_bnfold.fold_batch_norm(exported)
    text = folded.mlir_module()
    assert text.count("stablehlo.convolution(") == 1
    assert "-> tensor<3x3x8x8xf32>" in text.split("stablehlo.pad")[1].split("\n")[0]
    assert len([line for line in text.split("\n") if "stablehlo.convert" in line and "3x3x8x8xbf16>" in line]) == 1
    x = np.random.default_rng(2).normal(size=spec.shape).astype(np.float32)
    assert_close(np.asarray(exported.call(variables, x)), np.asarray(folded.call(variables, x)))


def _random_branches(seed: int):
    """A seeded sum of 2 or 3 parallel convolutions of one input (1 to 3 spatial
    dimensions, channels last or first, grouped or not; most draws a 3- or 5-tap kernel
    and smaller ones that fit in it, dilated or not, the others any kernels of 1 to 5 taps;
    padded so that their outputs agree, most centred, none negatively), some with bias adds, maybe
    an identity branch x * s + t, summed in a random order; f32 or bf16, weights as
    constants or arguments, a static or symbolic batch. None where the draw is no valid
    program."""
    rng = np.random.default_rng(seed)
    nd, channels_last = int(rng.choice([1, 2, 2, 3])), bool(rng.random() < 0.5)
    c = int(rng.choice([1, 2, 4]))
    groups = int(rng.choice([g for g in (1, 2, c) if c % g == 0]))
    size = [int(rng.integers(3, 7)) for _ in range(nd)]
    strides = [int(rng.choice([1, 1, 1, 2])) for _ in range(nd)]
    dtype = ml_dtypes.bfloat16 if rng.random() < 0.25 else np.float32
    arguments, symbolic = bool(rng.random() < 0.4), bool(rng.random() < 0.3)
    windows, fitting = [], rng.random() < 0.8  # most draws: windows that fit in the first
    host = [int(rng.choice([3, 5])) for _ in range(nd)]
    for index in range(int(rng.integers(2, 4))):
        if fitting:  # (a host dilated by 2 holds 3-tap kernels dilated by 2 or 4, and 1x1s)
            kernel = host if index == 0 else [int(rng.choice([1, 3, h])) for h in host]
            if index == 0:
                dilation = [int(rng.choice([1, 1, 2])) for _ in host]
            else:
                dilation = [
                    hd * (2 if k == 3 and h == 5 and rng.random() < 0.5 else 1) if k > 1 else 1
                    for k, h, hd in zip(kernel, host, windows[0][1])
                ]
        else:
            kernel = [int(rng.choice([1, 2, 3, 5])) for _ in range(nd)]
            dilation = [int(rng.choice([1, 1, 2])) for _ in range(nd)]
        padding = []
        for n, k, d, s in zip(size, kernel, dilation, strides):
            extent = (k - 1) * d + 1
            low = (extent - 1) // 2 if fitting else int(rng.integers(0, extent))
            padding.append((low, (-(-n // s) - 1) * s + extent - n - low))  # the same output size
        windows.append((kernel, dilation, padding, bool(rng.random() < 0.7)))
    if any(low < 0 or high < 0 for _, _, padding, _ in windows for low, high in padding):
        return None  # (XLA on the CPU reads outside the input for some negative paddings)
    kernels = [rng.normal(size=(*k, c // groups, c)).astype(dtype) for k, _, _, _ in windows]
    biases = [rng.normal(size=(c,)).astype(dtype) for _ in windows]
    s, t = rng.normal(size=(c,)).astype(dtype), rng.normal(size=(c,)).astype(dtype)
    identity = bool(rng.random() < 0.5)
    order = rng.permutation(len(windows) + identity)
    spatial = "DHW"[3 - nd :]
    numbers = ("N" + spatial + "C", spatial + "IO", "N" + spatial + "C") if channels_last else ("NC" + spatial, spatial + "IO", "NC" + spatial)
    axis = nd + 1 if channels_last else 1

    def model(*operands):
        ks, bs, x = (operands[: len(windows)], operands[len(windows) : -1], operands[-1]) if arguments else (kernels, biases, operands[-1])
        along = [c if d == axis else 1 for d in range(nd + 2)]
        terms = []
        for (_, dilation, padding, biased), k, b in zip(windows, ks, bs):
            y = jax.lax.conv_general_dilated(x, k, strides, padding, rhs_dilation=dilation,
                                             dimension_numbers=numbers, feature_group_count=groups)
            terms.append(y + b.reshape(along) if biased else y)
        if identity:
            terms.append(x * s.reshape(along) + t.reshape(along))
        out = terms[order[0]]
        for i in order[1:]:
            out = out + terms[i]
        return out

    shape = (2, *size, c) if channels_last else (2, c, *size)
    weights = [*kernels, *biases] if arguments else []
    specs = [jax.ShapeDtypeStruct(w.shape, dtype) for w in weights]
    try:
        jax.eval_shape(model, *specs, jax.ShapeDtypeStruct(shape, dtype))
    except (TypeError, ValueError):
        return None
    batch = export.symbolic_shape("b")[0] if symbolic else 2
    exported = export.export(jax.jit(model))(*specs, jax.ShapeDtypeStruct((batch, *shape[1:]), dtype))
    return exported, [*weights, rng.normal(size=shape).astype(dtype)]


def test_random_parallel_branches_compute_what_they_computed_and_merged_ones_lose_convolutions():
    merged = 0
    for seed in range(40):
        drawn = _random_branches(seed)
        if drawn is None:
            continue
        exported, arguments = drawn
        folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
        assert_close(np.asarray(exported.call(*arguments)), np.asarray(folded.call(*arguments)), f"seed {seed}")
        before = exported.mlir_module().count("stablehlo.convolution(")
        after = folded.mlir_module().count("stablehlo.convolution(")
        if any(not m.reason for m in report.merges):
            merged += 1
            assert after < before, f"seed {seed}: {report.to_text()}"
    assert merged >= 15  # the draws merge often enough to test the merge
