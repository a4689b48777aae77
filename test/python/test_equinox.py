"""Equinox: a conv -> BatchNorm -> relu -> conv -> BatchNorm network in inference, exported
with jax.export with its parameters and state as constants (closed over) and as arguments,
folded, and called.

`eqx.nn.BatchNorm(mode="batch")` in inference divides its running statistics by a
debiasing factor `where(count == 0, 1, 1 - momentum ** count)`, computed from the batch
counter in its state through `compare`, `convert`, `power` and a `call @_where`: a
parameter computed through any ops, which the fold must take for one.
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


class _ConvBnNet(eqx.Module):
    """conv 3x3 (3 -> 8, padded) -> BatchNorm -> relu -> conv 3x3 (8 -> 4) -> BatchNorm,
    on one CHW image (vmapped over the batch by the caller)."""

    conv1: eqx.nn.Conv2d
    norm1: eqx.nn.BatchNorm
    conv2: eqx.nn.Conv2d
    norm2: eqx.nn.BatchNorm

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.conv1 = eqx.nn.Conv2d(3, 8, 3, padding=1, key=k1)
        self.norm1 = eqx.nn.BatchNorm(8, axis_name="batch", mode="batch")
        self.conv2 = eqx.nn.Conv2d(8, 4, 3, key=k2)
        self.norm2 = eqx.nn.BatchNorm(4, axis_name="batch", mode="batch")

    def __call__(self, x, state):
        x, state = self.norm1(self.conv1(x), state)
        x, state = self.norm2(self.conv2(jax.nn.relu(x)), state)
        return x, state


def _model_and_state(count: int):
    """The network in inference mode with seeded norm parameters and running statistics
    (non-trivial, some scales negative), its counters at `count`."""
    model, state = eqx.nn.make_with_state(_ConvBnNet)(jax.random.PRNGKey(0))
    rng = np.random.default_rng(0)
    for name in ("norm1", "norm2"):
        norm = getattr(model, name)
        c = norm.input_size
        weight = rng.choice([-1.0, 1.0], c) * rng.uniform(0.5, 1.5, c)
        model = eqx.tree_at(
            lambda m: (getattr(m, name).weight, getattr(m, name).bias),
            model,
            (jnp.asarray(weight, jnp.float32), jnp.asarray(rng.normal(0, 0.2, c), jnp.float32)),
        )
        hidden = (rng.normal(0, 0.2, c), rng.uniform(0.5, 1.5, c))
        state = state.set(norm.batch_state_index, tuple(jnp.asarray(h, jnp.float32) for h in hidden))
        state = state.set(norm.batch_counter, jnp.array(count))
    return eqx.nn.inference_mode(model), state


def _export(weights_as_arguments: bool, count: int):
    """(exported, arguments it is called with but the image)."""
    model, state = _model_and_state(count)
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
