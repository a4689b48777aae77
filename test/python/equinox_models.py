"""Equinox networks for the tests (test_equinox.py, networks.py), with seeded norm
parameters and running statistics.

`eqx.nn.BatchNorm(mode="batch")` in inference divides its running statistics by a
debiasing factor `where(count == 0, 1, 1 - momentum ** count)` computed from the batch
counter in its state (jax.export writes `compare`, `convert`, `power` and a
`call @_where`). Each network takes one CHW image; callers vmap it over the batch.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["ConvBnNet", "ResNet", "seeded_inference"]


def _norm(channels: int) -> eqx.nn.BatchNorm:
    return eqx.nn.BatchNorm(channels, axis_name="batch", mode="batch")


class ConvBnNet(eqx.Module):
    """conv 3x3 (3 -> 8, padded) -> BatchNorm -> relu -> conv 3x3 (8 -> 4) -> BatchNorm."""

    conv1: eqx.nn.Conv2d
    norm1: eqx.nn.BatchNorm
    conv2: eqx.nn.Conv2d
    norm2: eqx.nn.BatchNorm

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.conv1 = eqx.nn.Conv2d(3, 8, 3, padding=1, key=k1)
        self.norm1 = _norm(8)
        self.conv2 = eqx.nn.Conv2d(8, 4, 3, key=k2)
        self.norm2 = _norm(4)

    def __call__(self, x, state):
        x, state = self.norm1(self.conv1(x), state)
        x, state = self.norm2(self.conv2(jax.nn.relu(x)), state)
        return x, state


class ResNet(eqx.Module):
    """A small ResNet: a 3x3 stem (3 -> 8) with BatchNorm and relu, a basic block (conv-BN-
    relu-conv-BN plus the input, relu), a strided 3x3 conv (8 -> 16) with BatchNorm and
    relu, global average pooling and a Linear classifier (5 classes). Convolutions
    without bias, as before a batch norm."""

    stem: eqx.nn.Conv2d
    stem_norm: eqx.nn.BatchNorm
    conv1: eqx.nn.Conv2d
    norm1: eqx.nn.BatchNorm
    conv2: eqx.nn.Conv2d
    norm2: eqx.nn.BatchNorm
    down: eqx.nn.Conv2d
    down_norm: eqx.nn.BatchNorm
    head: eqx.nn.Linear

    def __init__(self, key):
        keys = jax.random.split(key, 5)
        conv = lambda i, o, k, s=1: eqx.nn.Conv2d(i, o, 3, s, padding=1, use_bias=False, key=k)  # noqa: E731
        self.stem, self.stem_norm = conv(3, 8, keys[0]), _norm(8)
        self.conv1, self.norm1 = conv(8, 8, keys[1]), _norm(8)
        self.conv2, self.norm2 = conv(8, 8, keys[2]), _norm(8)
        self.down, self.down_norm = conv(8, 16, keys[3], 2), _norm(16)
        self.head = eqx.nn.Linear(16, 5, key=keys[4])

    def __call__(self, x, state):
        x, state = self.stem_norm(self.stem(x), state)
        x = jax.nn.relu(x)
        y, state = self.norm1(self.conv1(x), state)
        y, state = self.norm2(self.conv2(jax.nn.relu(y)), state)
        x = jax.nn.relu(x + y)
        x, state = self.down_norm(self.down(x), state)
        x = jax.nn.relu(x)
        return self.head(jnp.mean(x, axis=(1, 2))), state


def seeded_inference(cls: type, count: int, seed: int = 0):
    """(model, state): `cls` built with `jax.random.PRNGKey(seed)`, in inference mode, every
    BatchNorm with seeded parameters (scales U(0.5, 1.5) with a random sign, shifts
    N(0, 0.2²)) and running statistics (means N(0, 0.2²), variances U(0.5, 1.5)), its
    counter at `count`."""
    model, state = eqx.nn.make_with_state(cls)(jax.random.PRNGKey(seed))
    rng = np.random.default_rng(seed)

    def norms(m):
        return [x for x in jax.tree_util.tree_leaves(m, is_leaf=_is_norm) if _is_norm(x)]

    weights, biases = [], []
    for norm in norms(model):
        c = norm.input_size
        weights.append(jnp.asarray(rng.choice([-1.0, 1.0], c) * rng.uniform(0.5, 1.5, c), jnp.float32))
        biases.append(jnp.asarray(rng.normal(0.0, 0.2, c), jnp.float32))
        hidden = (rng.normal(0.0, 0.2, c), rng.uniform(0.5, 1.5, c))
        state = state.set(norm.batch_state_index, tuple(jnp.asarray(h, jnp.float32) for h in hidden))
        state = state.set(norm.batch_counter, jnp.array(count))
    model = eqx.tree_at(lambda m: [n.weight for n in norms(m)], model, weights)
    model = eqx.tree_at(lambda m: [n.bias for n in norms(m)], model, biases)
    return eqx.nn.inference_mode(model), state


def _is_norm(x) -> bool:
    return isinstance(x, eqx.nn.BatchNorm)
