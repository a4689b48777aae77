"""`constants.round_to` rounds float64 to bf16 once, not twice.

Rounding float64 to float32 and then to bf16 (what ml_dtypes' own cast does) can land on
the wrong side of a bf16 midpoint: a value just above the midpoint first rounds to the
midpoint itself, and the tie then goes to the even neighbour, below. The expected values
here are worked out by hand from the bf16 grid (8 bits of mantissa: between 1 and 2 the
step is 2**-7), not computed with the package or with ml_dtypes' cast.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from stablehlo_bnfold.constants import round_to

BF16 = np.dtype(ml_dtypes.bfloat16)
STEP = 2.0**-7  # bf16's spacing in [1, 2)
TINY = 2.0**-30  # well under float32's half spacing there (2**-24): float32 cannot see it

# (float64 value, the correctly rounded bf16 value, why)
CASES = [
    (1 + STEP / 2 + TINY, 1 + STEP, "just above the midpoint of 1 (even) and 1 + step (odd)"),
    (1 + STEP / 2 - TINY, 1.0, "just below the same midpoint"),
    (1 + STEP / 2, 1.0, "on the midpoint: ties to the even neighbour, 1"),
    (1 + 3 * STEP / 2 - TINY, 1 + STEP, "just below the midpoint of 1 + step (odd) and 1 + 2 step (even)"),
    (1 + 3 * STEP / 2 + TINY, 1 + 2 * STEP, "just above it"),
    (1 + 3 * STEP / 2, 1 + 2 * STEP, "on it: ties to the even neighbour, 1 + 2 step"),
    (-(1 + STEP / 2 + TINY), -(1 + STEP), "negative, just above the midpoint in magnitude"),
    (-(1 + 3 * STEP / 2 - TINY), -(1 + STEP), "negative, just below in magnitude"),
    (1 + STEP, 1 + STEP, "exact"),
    (3.0, 3.0, "exact"),
    (0.0, 0.0, "zero"),
]


@pytest.mark.parametrize("value, want, why", CASES, ids=[c[2] for c in CASES])
def test_float64_is_rounded_to_bf16_once_to_the_nearest(value, want, why):
    got = round_to(BF16, np.array([value]))
    assert got.dtype == BF16
    assert float(got[0]) == want, f"{value!r} -> {float(got[0])!r}, want {want!r} ({why})"


def test_the_double_rounding_these_cases_guard_against_is_real():
    # Through float32 first, the value just above the midpoint lands on the midpoint and
    # then ties down: the case above would fail for a round_to that did that.
    via_float32 = np.array([1 + STEP / 2 + TINY]).astype(np.float32).astype(BF16)
    assert float(via_float32[0]) == 1.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, BF16])
def test_round_to_refuses_what_overflows_and_keeps_the_largest_finite(dtype):
    largest = float(ml_dtypes.finfo(dtype).max)
    assert round_to(np.dtype(dtype), np.array([largest]))[0] == largest
    assert round_to(np.dtype(dtype), np.array([largest * 2])) is None
    assert round_to(np.dtype(dtype), np.array([np.nan])) is None
