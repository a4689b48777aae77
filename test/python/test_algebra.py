"""The per-channel constant algebra of `fold.affine_map`: identities and operand order.

`combine(rw, ufunc, a, b, like)` (`per_channel_op` built by `rw.realize`) computes
`ufunc(a, b)` on per-channel values: in float64 when both are constants, else as an op
built in the graph, except where an identity makes the op unnecessary (`x + 0`, `x - 0`,
`x * 1`, `x / 1`, `0 * x`, ...). Each identity is checked here on its own, with its mirror
image, which for subtract and divide is NOT an identity (`0 - x` is `-x`, built as one
negate; `1 / x` is not `x`). The rewriter is a recorder around the real `FoldRewriter.realize`, so a test sees
exactly which op would be built and with its operands in which order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from stablehlo_bnfold.fold import affine_map
from stablehlo_bnfold.fold.plan import combine
from stablehlo_bnfold.fold.rewriter import FoldRewriter


def square_root(rw, a, like):
    """`affine_map.square_root`, built at once by `rw` as `combine` is."""
    return rw.realize(affine_map.square_root(a, like))[0]

C = 3
ZEROS, ONES = np.zeros(C), np.ones(C)


@dataclass(frozen=True)
class Built:
    """An op the recorder was asked to build."""

    op: type
    operands: tuple


class Recorder:
    """Stands in for FoldRewriter: records what would be built and returns a token for it."""

    def __init__(self):
        self.built: list[Built] = []
        self._realized = {}  # FoldRewriter's: the computed values built so far

    realize = FoldRewriter.realize

    def vector(self, value, channels, element_type):
        assert channels == C
        return ("vector", value if not isinstance(value, np.ndarray) else tuple(value))

    def elementwise(self, op, *operands):
        self.built.append(Built(op, operands))
        return self.built[-1]

    def unary(self, op, operand):
        self.built.append(Built(op, (operand,)))
        return self.built[-1]


@pytest.fixture(scope="module")
def x():
    """A per-channel value not known at compile time: a function argument of type [C]."""
    with make_ir_context(), ir.Location.unknown():
        module = ir.Module.parse(
            f"func.func @f(%x: tensor<{C}xf32>) -> tensor<{C}xf32> {{\n"
            f"  return %x : tensor<{C}xf32>\n}}"
        )
        yield module.body.operations[0].regions[0].blocks[0].arguments[0]


IDENTITIES = [
    # (name, ufunc, a, b, what combine returns: "x" or an array)
    ("x + 0", np.add, "x", ZEROS, "x"),
    ("0 + x", np.add, ZEROS, "x", "x"),
    ("x - 0", np.subtract, "x", ZEROS, "x"),
    ("x * 1", np.multiply, "x", ONES, "x"),
    ("1 * x", np.multiply, ONES, "x", "x"),
    ("x / 1", np.divide, "x", ONES, "x"),
    ("x * 0", np.multiply, "x", ZEROS, ZEROS),
    ("0 * x", np.multiply, ZEROS, "x", ZEROS),
]


@pytest.mark.parametrize("name, ufunc, a, b, want", IDENTITIES, ids=[i[0] for i in IDENTITIES])
def test_an_identity_builds_no_op_and_returns_its_value(x, name, ufunc, a, b, want):
    rw = Recorder()
    a, b = (x if isinstance(v, str) else v for v in (a, b))
    got = combine(rw, ufunc, a, b, x)
    assert rw.built == []
    if isinstance(want, str):
        assert got is x
    else:
        assert isinstance(got, np.ndarray) and np.array_equal(got, want)


NOT_IDENTITIES = [
    # (name, ufunc, a, b, the op built): no shortcut applies; operands keep their order.
    ("1 / x", np.divide, ONES, "x", stablehlo.DivOp),
    ("0 / x", np.divide, ZEROS, "x", stablehlo.DivOp),
    ("x / 0", np.divide, "x", ZEROS, stablehlo.DivOp),
    ("1 - x", np.subtract, ONES, "x", stablehlo.SubtractOp),
    ("x - 1", np.subtract, "x", ONES, stablehlo.SubtractOp),
    ("x + 1", np.add, "x", ONES, stablehlo.AddOp),
    ("x * 2", np.multiply, "x", 2 * ONES, stablehlo.MulOp),
    ("x / 2", np.divide, "x", 2 * ONES, stablehlo.DivOp),
    ("x + [0, 1, 0]", np.add, "x", np.array([0.0, 1.0, 0.0]), stablehlo.AddOp),
    ("x * [1, 1, 0]", np.multiply, "x", np.array([1.0, 1.0, 0.0]), stablehlo.MulOp),
    ("x + x", np.add, "x", "x", stablehlo.AddOp),
]


@pytest.mark.parametrize("name, ufunc, a, b, op", NOT_IDENTITIES, ids=[i[0] for i in NOT_IDENTITIES])
def test_no_shortcut_where_there_is_no_identity_and_operands_keep_their_order(x, name, ufunc, a, b, op):
    rw = Recorder()
    a, b = (x if isinstance(v, str) else v for v in (a, b))
    got = combine(rw, ufunc, a, b, x)
    expected_operands = tuple(
        ("vector", v if not isinstance(v, np.ndarray) else tuple(v)) for v in (a, b)
    )
    assert rw.built == [Built(op, expected_operands)]
    assert got is rw.built[0]


def test_zero_minus_a_value_in_the_graph_is_one_negate_and_no_zero_vector(x):
    rw = Recorder()
    got = combine(rw, np.subtract, ZEROS, x, x)
    assert rw.built == [Built(stablehlo.NegOp, (("vector", x),))]
    assert got is rw.built[0]


def test_a_negation_is_carried_to_the_add_that_ends_it():
    # Flax's shift in the graph, (0 - mean) * s + offset, is built as offset - mean * s:
    # two ops on [C] vectors, where it took a zero vector and three (exact: negation is,
    # and offset + (-p) is offset - p in every rounding mode).
    rw = Recorder()
    with make_ir_context(), ir.Location.unknown():
        vector = f"tensor<{C}xf32>"
        module = ir.Module.parse(
            f"func.func @f(%m: {vector}, %s: {vector}, %o: {vector}) -> {vector} {{\n"
            f"  return %m : {vector}\n}}"
        )
        mean, scale, offset = module.body.operations[0].regions[0].blocks[0].arguments
        shift = affine_map.per_channel_op(np.subtract, ZEROS, mean, mean)
        shift = affine_map.per_channel_op(np.multiply, shift, scale, mean)
        shift = affine_map.per_channel_op(np.add, shift, offset, mean)
        got = rw.realize(shift)[0]
    product = Built(stablehlo.MulOp, (("vector", mean), ("vector", scale)))
    assert rw.built == [product, Built(stablehlo.SubtractOp, (("vector", offset), ("vector", product)))]
    assert got is rw.built[-1]


@pytest.mark.parametrize(
    "ufunc, a, b, want",
    [
        (np.add, [1.0, -2.0, 0.5], [0.25, 2.0, -0.5], [1.25, 0.0, 0.0]),
        (np.subtract, [0.0, 0.0, 1.0], [1.0, -2.0, 3.0], [-1.0, 2.0, -2.0]),
        (np.subtract, [1.0, -2.0, 3.0], [0.0, 0.0, 0.0], [1.0, -2.0, 3.0]),
        (np.multiply, [2.0, -3.0, 0.5], [0.5, 2.0, 0.0], [1.0, -6.0, 0.0]),
        (np.divide, [1.0, 1.0, 3.0], [4.0, -0.5, 1.0], [0.25, -2.0, 3.0]),
        (np.divide, [1.0, -1.0, 0.0], [0.0, 0.0, 0.0], [np.inf, -np.inf, np.nan]),
    ],
)
def test_two_constants_are_combined_in_float64_and_nothing_is_built(x, ufunc, a, b, want):
    rw = Recorder()
    got = combine(rw, ufunc, np.array(a), np.array(b), x)
    assert rw.built == [] and got.dtype == np.float64
    np.testing.assert_array_equal(got, want)  # NaN where NaN: the patterns refuse it later


def test_float64_combination_is_one_float64_operation_not_a_float32_one(x):
    # 1 / 3 and 0.1 + 0.2 in float64, bit for bit: a step in float32 would differ.
    third = combine(Recorder(), np.divide, ONES, 3 * ONES, x)
    assert third[0] == 1.0 / 3.0 and third[0] != float(np.float32(1.0) / np.float32(3.0))
    tenths = combine(Recorder(), np.add, np.full(C, 0.1), np.full(C, 0.2), x)
    assert tenths[0] == 0.1 + 0.2


def test_square_root_of_constants_is_the_float64_square_root(x):
    values = np.array([2.0, 0.3, 1e-3 + 1.743979247697027])
    got = square_root(Recorder(), values, x)
    assert got.dtype == np.float64
    assert np.array_equal(got, np.sqrt(values))
    assert got[0] != float(np.sqrt(np.float32(2.0)))


def test_square_root_of_a_value_in_the_graph_builds_one_sqrt(x):
    rw = Recorder()
    got = square_root(rw, x, x)
    assert rw.built == [Built(stablehlo.SqrtOp, (("vector", x),))]
    assert got is rw.built[0]


def test_a_computed_value_freed_in_an_application_is_never_confused_with_a_new_one(x):
    # realize keeps what it built this application, so that the ops of a chain built in one
    # application reuse each other's values. Keyed by id(), a Computed freed meanwhile
    # left its address to the next one made, which was then given the op built for the
    # first (the Q/K/V biases of a Flax attention block with weights as arguments got each
    # other's values, or one that did not dominate its use, at random). Many values freed
    # and made one after the other: CPython reuses a freed object's address at once.
    rw = Recorder()
    with make_ir_context(), ir.Location.unknown():
        got = []
        for k in range(50):
            value = affine_map.Computed(np.add, (x, np.full(C, float(k))), x.type.element_type, C)
            got.append(rw.realize(value)[0])
            del value
    assert len(rw.built) == 50
    assert [b.operands[1] for b in rw.built] == [("vector", (float(k),) * C) for k in range(50)]
    assert got == rw.built
