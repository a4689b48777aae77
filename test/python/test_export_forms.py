"""Every export form gets the same folds (issue 18, item 4): a symbolic batch folds what
the static export folds, on the input side too, and mixed precision with a symbolic
batch keeps each convolution once.

The blocks are the real Flax exports of flax_models.py, folded with the API and called
through JAX against the original.
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp
import numpy as np
import pytest
from flax_models import BLOCKS, Block, ConvNet, block_variables, export_block
from helpers import LARGER, assert_close

import stablehlo_bnfold


def _ids(value):
    return {False: "constants", True: "arguments"}.get(value, value)


@pytest.mark.parametrize("weights_as_arguments", [False, True], ids=_ids)
@pytest.mark.parametrize("name", [b.name for b in BLOCKS])
def test_symbolic_batch_folds_every_norm_the_static_export_folds(name, weights_as_arguments):
    block = next(b for b in BLOCKS if b.name == name)
    variables = block_variables(block)
    reports = {}
    for symbolic in (False, True):
        exported = export_block(
            block, variables, weights_as_arguments=weights_as_arguments, symbolic_batch=symbolic
        )
        # LARGER: a symbolic batch counts as 1 for the cost rule, the static export's is 2.
        folded, reports[symbolic] = stablehlo_bnfold.fold_batch_norm(exported, with_report=True, options=LARGER)
    args = (variables, block.input(seed=3)) if weights_as_arguments else (block.input(seed=3),)

    assert reports[True].folded == reports[False].folded > 0
    assert sorted(s.reason for s in reports[True].skips) == sorted(s.reason for s in reports[False].skips)
    assert_close(np.asarray(exported.call(*args)), np.asarray(folded.call(*args)), what=f"{name} output")


def test_mixed_precision_with_a_symbolic_batch_keeps_each_convolution_once():
    # bf16 convolutions, batch norms in f32 between convert pairs: the bias broadcast
    # must read its shape from the new convolution, not keep the old one alive for it.
    block = Block("convnet_bf16", ConvNet(dtype=jnp.bfloat16), (2, 8, 8, 3))
    variables = block_variables(block)
    exported = export_block(block, variables, weights_as_arguments=False, symbolic_batch=True)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)

    assert report.folded == 3
    before, after = exported.mlir_module(), folded.mlir_module()
    assert after.count("stablehlo.convolution") == before.count("stablehlo.convolution") == 2
    x = block.input(seed=4)
    assert_close(np.asarray(exported.call(x)), np.asarray(folded.call(x)))


class _NormThenAttention(nn.Module):
    """LayerNorm before Flax's attention: its q, k, v projections are DenseGeneral layers
    with a [heads, head_dim] bias each."""

    @nn.compact
    def __call__(self, x):
        h = nn.LayerNorm()(x)
        return nn.MultiHeadDotProductAttention(num_heads=2)(h, h)


def test_layer_norm_shift_and_query_scaling_fold_into_flax_attentions_projections():
    block = Block("norm_attention", _NormThenAttention(), (2, 5, 8))
    variables = block_variables(block)
    exported = export_block(block, variables, weights_as_arguments=False)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)

    # Scale and shift both fold: no x + t / s is left in front of q, k and v; and the
    # query scaling query / sqrt(head_dim) folds into the query projection.
    assert report.folded == 2
    assert report.skips == ()
    assert "stablehlo.divide" not in "\n".join(
        line for line in folded.mlir_module().splitlines() if "x2x4xf32>" in line
    )
    x = block.input(seed=5)
    assert_close(np.asarray(exported.call(x)), np.asarray(folded.call(x)))
