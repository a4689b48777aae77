"""Flax (linen) models and blocks that real models are made of, exported with `jax.export`,
shared by the tests that fold them (test_producers.py, test_transformers.py).

`ConvNet` has batch norms after linear ops, `NormalizedHead` before them. The `BLOCKS` put
a norm's per-feature affine map (LayerNorm, RMSNorm: `x * s + t` after normalizing) in
front of linear ops: a pre-norm transformer block (LayerNorm before separate Q, K and V
projections and before the MLP), a LLaMA-style block (RMSNorm before Q, K, V and before
SwiGLU's gate and up projections) and a ConvNeXt block (depthwise convolution, LayerNorm,
pointwise Dense layers, layer scale).

`export_block` exports a block with its variables as constants (closed over) or as
arguments (`jax.export(jax.jit(model.apply))(variables, x)`), optionally with a symbolic
batch; `block_variables` gives every parameter non-trivial values (a norm's scale of all
ones and offset of zeros would hide a fold that dropped them).
"""

from __future__ import annotations

from dataclasses import dataclass

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jax import export

__all__ = [
    "BLOCKS",
    "Block",
    "ConvNet",
    "ConvNeXtBlock",
    "LlamaBlock",
    "NormOnly",
    "NormalizedHead",
    "PreNormTransformerBlock",
    "block_variables",
    "export_block",
]


def _attention(q: jax.Array, k: jax.Array, v: jax.Array, heads: int) -> jax.Array:
    """Multi-head scaled dot-product attention on [B, T, D] projections."""
    b, t, d = q.shape
    split = lambda a: a.reshape(b, t, heads, d // heads)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d // heads).astype(q.dtype)
    weights = jax.nn.softmax(logits, axis=-1)
    return jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, t, d)


class PreNormTransformerBlock(nn.Module):
    """ViT / GPT-2 style: x + attn(LayerNorm(x)), then x + MLP(LayerNorm(x)); Q, K and V are
    three separate Dense layers reading the same normalized value."""

    heads: int = 2
    mlp_ratio: int = 4

    @nn.compact
    def __call__(self, x):
        d = x.shape[-1]
        h = nn.LayerNorm(name="ln_attn")(x)
        q = nn.Dense(d, name="q")(h)
        k = nn.Dense(d, name="k")(h)
        v = nn.Dense(d, name="v")(h)
        x = x + nn.Dense(d, name="out")(_attention(q, k, v, self.heads))
        h = nn.LayerNorm(name="ln_mlp")(x)
        h = nn.gelu(nn.Dense(self.mlp_ratio * d, name="fc1")(h))
        return x + nn.Dense(d, name="fc2")(h)


class LlamaBlock(nn.Module):
    """LLaMA style: x + attn(RMSNorm(x)) with bias-free Q, K, V, O; then
    x + down(silu(gate(h)) * up(h)) with h = RMSNorm(x) (SwiGLU)."""

    heads: int = 2
    hidden: int = 24

    @nn.compact
    def __call__(self, x):
        d = x.shape[-1]
        h = nn.RMSNorm(name="attn_norm")(x)
        q = nn.Dense(d, use_bias=False, name="q")(h)
        k = nn.Dense(d, use_bias=False, name="k")(h)
        v = nn.Dense(d, use_bias=False, name="v")(h)
        x = x + nn.Dense(d, use_bias=False, name="o")(_attention(q, k, v, self.heads))
        h = nn.RMSNorm(name="mlp_norm")(x)
        gate = nn.Dense(self.hidden, use_bias=False, name="gate")(h)
        up = nn.Dense(self.hidden, use_bias=False, name="up")(h)
        return x + nn.Dense(d, use_bias=False, name="down")(nn.silu(gate) * up)


class ConvNeXtBlock(nn.Module):
    """ConvNeXt: x + gamma * pw2(gelu(pw1(LayerNorm(dwconv7x7(x))))), NHWC; the pointwise
    layers are Dense layers on the channel dimension, gamma the layer scale."""

    mlp_ratio: int = 4

    @nn.compact
    def __call__(self, x):
        c = x.shape[-1]
        h = nn.Conv(c, (7, 7), padding="SAME", feature_group_count=c, name="dwconv")(x)
        h = nn.LayerNorm(epsilon=1e-6, name="norm")(h)
        h = nn.gelu(nn.Dense(self.mlp_ratio * c, name="pwconv1")(h))
        h = nn.Dense(c, name="pwconv2")(h)
        gamma = self.param("gamma", nn.initializers.constant(1e-1), (c,))
        return x + gamma * h


class ConvNet(nn.Module):
    """conv + bias + BN + relu, a grouped conv + BN, then dense + BN: what ResNet-style and
    MobileNet-style models are made of (batch norm after linear ops)."""

    dtype: object = jnp.float32

    @nn.compact
    def __call__(self, x):
        x = nn.Conv(8, (3, 3), dtype=self.dtype)(x)
        x = nn.relu(nn.BatchNorm(use_running_average=True, dtype=self.dtype)(x))
        x = nn.Conv(8, (3, 3), feature_group_count=8, use_bias=False, dtype=self.dtype)(x)
        x = nn.BatchNorm(use_running_average=True, dtype=self.dtype)(x)
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(4, use_bias=False, dtype=self.dtype)(x)
        return nn.BatchNorm(use_running_average=True, dtype=self.dtype)(x)


class NormalizedHead(nn.Module):
    """Batch norm *before* linear ops: input normalization before a VALID convolution, and a
    BNNeck (batch norm on the embedding) before the dense classifier."""

    @nn.compact
    def __call__(self, x):
        x = nn.BatchNorm(use_running_average=True)(x)
        x = nn.relu(nn.Conv(4, (3, 3), padding="VALID")(x))
        x = x.reshape((x.shape[0], -1))
        x = nn.BatchNorm(use_running_average=True)(x)
        return nn.Dense(10)(x)


class NormOnly(nn.Module):
    """A batch norm with no linear op next to it."""

    @nn.compact
    def __call__(self, x):
        return nn.BatchNorm(use_running_average=True)(x)


@dataclass(frozen=True)
class Block:
    """A block and the input it is exported for."""

    name: str
    model: nn.Module
    input_shape: tuple[int, ...]

    def input(self, seed: int = 0) -> np.ndarray:
        """A seeded standard-normal input of `input_shape`."""
        return np.random.default_rng(seed).standard_normal(self.input_shape).astype(np.float32)


BLOCKS = (
    Block("prenorm_transformer", PreNormTransformerBlock(), (2, 5, 16)),
    Block("llama", LlamaBlock(), (2, 5, 16)),
    Block("convnext", ConvNeXtBlock(), (2, 8, 8, 8)),
)
"""Every block, with an input small enough to fold and run in well under a second."""


def block_variables(block: Block, offsets: tuple[float, float] = (-0.25, 0.25)):
    """The block's initialized variables, each parameter moved by a seeded uniform offset
    in `offsets`: norms get scales other than one and offsets other than zero, and with
    the default kernels stay near their initial scale (attention logits of order one)."""
    variables = block.model.init(jax.random.PRNGKey(0), block.input())
    rng = np.random.default_rng(1)
    low, high = offsets
    return jax.tree.map(lambda a: a + rng.uniform(low, high, a.shape).astype(a.dtype), variables)


def export_block(
    block: Block,
    variables,
    *,
    weights_as_arguments: bool,
    symbolic_batch: bool = False,
    platforms: tuple[str, ...] | None = None,
) -> export.Exported:
    """`block` exported for its input shape: with `weights_as_arguments` the variables are
    the first argument (`exported.call(variables, x)`), else constants (`.call(x)`);
    `symbolic_batch` makes the batch dimension symbolic, `platforms` lowers for several
    platforms (the model inside `stablehlo.case` branches)."""
    batch = export.symbolic_shape("b")[0] if symbolic_batch else block.input_shape[0]
    spec = jax.ShapeDtypeStruct((batch, *block.input_shape[1:]), np.float32)
    kwargs = {"platforms": platforms} if platforms else {}
    model = block.model
    if weights_as_arguments:
        return export.export(jax.jit(model.apply), **kwargs)(variables, spec)
    return export.export(jax.jit(lambda x: model.apply(variables, x)), **kwargs)(spec)
