"""Equinox: a conv -> BatchNorm -> relu -> conv -> BatchNorm network in inference
(equinox_models.ConvBnNet), exported with jax.export with its parameters and state as
constants (closed over) and as arguments, folded, and called.

The batch norm's debiasing factor `where(count == 0, 1, 1 - momentum ** count)` is a
parameter computed through a compare, a power and a call: the fold must take it for one.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import activation_sized_bn_ops, relative_error
from jax import export

import stablehlo_bnfold

eqx = pytest.importorskip("equinox")
from equinox_models import ConvBnNet, seeded_inference  # noqa: E402


def _export(weights_as_arguments: bool, count: int):
    """(exported, arguments it is called with but the image)."""
    model, state = seeded_inference(ConvBnNet, count)
    spec = jax.ShapeDtypeStruct((2, 3, 8, 8), jnp.float32)
    if not weights_as_arguments:
        def closed(x):
            return jax.vmap(lambda image: model(image, state)[0])(x)

        return export.export(jax.jit(closed))(spec), ()
    params, static = eqx.partition(model, eqx.is_array)

    def applied(params, state, x):
        network = eqx.combine(params, static)
        return jax.vmap(lambda image: network(image, state)[0])(x)

    return export.export(jax.jit(applied))(params, state, spec), (params, state)


@pytest.mark.parametrize("count", [0, 3], ids=["count0", "count3"])
@pytest.mark.parametrize("weights_as_arguments", [False, True], ids=["constants", "arguments"])
def test_equinox_batch_norm_with_debiasing_folds_and_calls_like_the_original(weights_as_arguments, count):
    exported, weights = _export(weights_as_arguments, count)
    assert "call @_where" in exported.mlir_module() and "stablehlo.compare" in exported.mlir_module()
    assert activation_sized_bn_ops(exported), "the export should hold batch-norm ops"

    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)

    assert report.skips == () and report.folded > 0
    assert activation_sized_bn_ops(folded) == []
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((2, 3, 8, 8)).astype(np.float32)
        expected, actual = exported.call(*weights, x), folded.call(*weights, x)
        assert relative_error(expected, actual) <= 1e-6
