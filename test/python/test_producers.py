"""Real producers: Flax (linen) models exported with jax.export, folded, and called.

Each model is exported with its variables as constants (closed over) and as arguments
(`jax.export(jax.jit(model.apply))(variables, x)`), and in the variants exporters really
produce: several platforms (the convolution inside `stablehlo.case`), a symbolic batch
(`dynamic_broadcast_in_dim`), and bf16 compute with f32 batch norm. The folded `Exported`
must `.call()` like the original and keep no activation-sized batch-norm op.
"""

from __future__ import annotations

import dataclasses

import flax.linen as nn
import jax.numpy as jnp
import numpy as np
import pytest
from flax_models import Block, ConvNet, NormalizedHead, NormOnly, block_variables, export_block
from helpers import LARGER, activation_sized_bn_ops, relative_error
from jax import export

import stablehlo_bnfold

@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    dtype: object = jnp.float32
    weights_as_arguments: bool = False
    platforms: tuple[str, ...] | None = None
    symbolic_batch: bool = False


CASES = [
    Case("flax_constants_f32"),
    Case("flax_arguments_f32", weights_as_arguments=True),
    Case("flax_multi_platform_f32", platforms=("cpu", "cuda")),
    Case("flax_symbolic_batch_f32", symbolic_batch=True),
    Case("flax_symbolic_batch_arguments_f32", weights_as_arguments=True, symbolic_batch=True),
]


def _variables(model: nn.Module, x: np.ndarray):
    # Non-trivial statistics, so a fold that ignored one of them would show.
    return block_variables(Block("model", model, x.shape), offsets=(0.1, 0.9))


def _export(case: Case, model: nn.Module, variables, x: np.ndarray) -> export.Exported:
    return export_block(
        Block(case.name, model, x.shape),
        variables,
        weights_as_arguments=case.weights_as_arguments,
        symbolic_batch=case.symbolic_batch,
        platforms=case.platforms,
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_flax_export_folds_completely_and_calls_like_the_original(case):
    model = ConvNet(dtype=case.dtype)
    x = np.random.default_rng(0).standard_normal((2, 6, 6, 3)).astype(np.float32)
    variables = _variables(model, x)
    exported = _export(case, model, variables, x)
    assert activation_sized_bn_ops(exported), "the export should contain batch-norm ops"

    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True, options=LARGER)

    assert activation_sized_bn_ops(folded) == []
    assert report.folded > 0 and report.skips == ()
    args = (variables, x) if case.weights_as_arguments else (x,)
    assert relative_error(exported.call(*args), folded.call(*args)) <= 1e-6


@pytest.mark.parametrize("weights_as_arguments", [False, True], ids=["constants", "arguments"])
def test_flax_bf16_compute_folds_without_losing_more_than_the_original(weights_as_arguments):
    # The batch norm runs in f32 between converts; the fold rounds the scaled f32 master
    # weights to bf16 once, as the original rounds the master weights (with weights as
    # arguments in the graph: convert_bf16(W_f32 * s_f32)). Against an all-f32 reference,
    # the folded model must be about as accurate as the original bf16 one.
    x = np.random.default_rng(0).standard_normal((2, 6, 6, 3)).astype(np.float32)
    variables = _variables(ConvNet(), x)
    reference = _export(Case("ref"), ConvNet(), variables, x)
    case = Case("bf16", weights_as_arguments=weights_as_arguments)
    exported = _export(case, ConvNet(dtype=jnp.bfloat16), variables, x)

    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)

    assert activation_sized_bn_ops(folded) == []
    assert {f.pattern for f in report.folds} == {"fold_precision_island"}
    errors_original, errors_folded = [], []
    for seed in range(8):
        xs = np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32)
        args = (variables, xs) if weights_as_arguments else (xs,)
        expected = reference.call(xs)
        errors_original.append(relative_error(expected, exported.call(*args)))
        errors_folded.append(relative_error(expected, folded.call(*args)))
    assert np.mean(errors_folded) <= 1.25 * np.mean(errors_original)


def test_batch_norm_without_a_linear_producer_is_left_untouched():
    x = np.random.default_rng(0).standard_normal((2, 4, 4, 3)).astype(np.float32)
    variables = _variables(NormOnly(), x)
    exported = _export(Case("norm"), NormOnly(), variables, x)

    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)

    assert folded.mlir_module() == exported.mlir_module()
    assert report.folded == 0


def test_flax_batch_norm_before_a_valid_conv_and_a_dense_layer_folds_into_them():
    x = np.random.default_rng(0).standard_normal((2, 8, 8, 3)).astype(np.float32)
    variables = _variables(NormalizedHead(), x)
    exported = _export(Case("head"), NormalizedHead(), variables, x)

    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)

    assert report.skips == ()
    assert {(f.pattern, f.linear) for f in report.folds} >= {
        ("fold_input_affine_into_conv", "stablehlo.convolution"),
        ("fold_input_affine_into_dot_general", "stablehlo.dot_general"),
    }
    text = folded.mlir_module()
    assert "stablehlo.multiply" not in text and "stablehlo.subtract" not in text
    assert relative_error(exported.call(x), folded.call(x)) <= 1e-6
