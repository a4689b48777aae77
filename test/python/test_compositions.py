"""Passage rules composed with themselves and with their neighbours: the weights a fold
writes are checked bit for bit, against the float64 product of the stored weights and the
per-channel scale (gamma / sqrt(variance + epsilon), not a power of two) rounded once to
the weights' type, computed here independently of the package's rounding.

The numerics of every pair of ops, both directions, against float64 are
test_chain_properties.py's; here each fold's arithmetic is checked exactly.
"""

from __future__ import annotations

import ast
import re

import ml_dtypes
import numpy as np
import pytest
from chains import DTYPES, EPSILON, Chain, build
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir

import stablehlo_bnfold
from stablehlo_bnfold.constants import constant_f64

_BF16 = np.dtype(ml_dtypes.bfloat16)


def round_once(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float64 `values` rounded once, to nearest (ties to even), to `dtype`, back in
    float64. numpy rounds float64 to float32 and float16 once; ml_dtypes' bfloat16 cast
    goes through float32 (twice), so for bfloat16 the nearest of the cast's value and its
    two neighbours on the bfloat16 grid is taken."""
    values = np.asarray(values, np.float64)
    if dtype != _BF16:
        return values.astype(dtype).astype(np.float64)
    guess = values.astype(_BF16).view(np.uint16).astype(np.int64)
    candidates = np.stack([guess - 1, guess, guess + 1]).astype(np.uint16).view(_BF16).astype(np.float64)
    distance = np.abs(candidates - values)
    even = (np.stack([guess - 1, guess, guess + 1]) % 2 == 0)
    best = np.lexsort((~even, distance), axis=0)[0]  # nearest, then even
    return np.take_along_axis(candidates, best[None], axis=0)[0]


def _constants(text: str, stem: str) -> list[np.ndarray]:
    """The values of the constants named %<stem><n> in a module `chains` wrote, in order."""
    found = re.findall(rf"%{stem}\d+ = stablehlo.constant dense<(.+?)> : tensor<", text)
    return [np.array(ast.literal_eval(body), np.float64) for body in found]


def _scale(text: str, form: str) -> np.ndarray:
    """The per-channel scale of the module's map, in float64 as the pass must compute it."""
    if form == "multiply_add":
        return _constants(text, "scale")[0]
    (gamma,), (variance,) = _constants(text, "gam"), _constants(text, "var")
    return gamma / np.sqrt(variance + np.float64(np.float32(EPSILON)))


def _folded_weights(folded: str) -> list[np.ndarray]:
    """The weights of every linear op of the folded module, in order."""
    with make_ir_context():
        module = ir.Module.parse(folded)
        main = module.body.operations[0]
        weights = []
        for op in main.regions[0].blocks[0].operations:
            if op.operation.name in ("stablehlo.convolution", "stablehlo.dot_general"):
                weights.append(constant_f64(op.operands[1]))
        return weights


# (direction, ops): the output side through nothing, a relu, and the ops it passes one
# after another; the input side the same. Positive scales: each chain folds whole.
CHAINS = [
    ("backward", ()),
    ("backward", ("relu",)),
    ("backward", ("relu", "relu")),
    ("backward", ("relu", "max_pool")),
    ("backward", ("max_pool", "relu6")),
    ("backward", ("transpose", "transpose")),
    ("backward", ("reshape", "relu")),
    ("forward", ()),
    ("forward", ("relu",)),
    ("forward", ("relu", "relu")),
    ("forward", ("relu6", "relu6_call")),
    ("forward", ("relu", "max_pool")),
    ("forward", ("pad", "pad")),
    ("forward", ("transpose", "relu")),
    ("forward", ("sum_pool", "sum_pool")),
]


@pytest.mark.parametrize("form", ["batch_norm", "multiply_add"])
@pytest.mark.parametrize("linear", ["convolution", "dot_general"])
@pytest.mark.parametrize("element", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("direction, ops", CHAINS)
def test_folded_weights_are_the_float64_product_rounded_once(direction, ops, element, linear, form):
    chain = Chain(direction, ops, form=form, linear=linear, seed=len(ops) + 17)
    text, _, _ = build([chain], element)
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    assert report.folded >= 1, report.to_text()
    (stored,) = _constants(text, "kernel" if linear == "convolution" else "w")
    scale = _scale(text, form)
    # The scale runs along the weights' output axis (output side) or input axis (input
    # side): HWIO kernels and [C, O] dense weights.
    if direction == "backward":
        axis = stored.ndim - 1
    else:
        axis = stored.ndim - 2
    shape = [1] * stored.ndim
    shape[axis] = scale.size
    expected = round_once(stored * scale.reshape(shape), DTYPES[element])
    (weights,) = _folded_weights(folded)
    assert weights.shape == expected.shape
    mismatched = np.flatnonzero(weights.reshape(-1) != expected.reshape(-1))
    assert mismatched.size == 0, (
        f"{mismatched.size} of {expected.size} weights differ: "
        f"folded {weights.reshape(-1)[mismatched[:3]]}, expected {expected.reshape(-1)[mismatched[:3]]}"
    )


def test_round_once_rounds_bfloat16_once():
    # 1 + 2**-8 + 2**-30 is just above the midpoint between 1 and 1 + 2**-7: float32 first
    # makes it the midpoint, whose tie goes to 1 (even); rounded once it is 1 + 2**-7.
    value = np.array([1 + 2.0**-8 + 2.0**-30, -(1 + 2.0**-8 + 2.0**-30), 1 + 2.0**-8])
    assert round_once(value, _BF16).tolist() == [1 + 2.0**-7, -(1 + 2.0**-7), 1.0]
