"""Property tests: a per-channel affine map and a linear op with a chain of the ops the map
commutes with between them, folded by the API, never worse than the original against
float64.

`chains.py` builds the modules: the map (batch_norm_inference or a multiply and an add;
scales all positive, all negative or of both signs; a dead channel, running variance 0; a
huge gamma) before the ops and a convolution or dot_general after them (forward, the map on
the linear op's input) or after a linear op and the ops (backward, on its output), in f32,
f16 and bf16, and the same module in float64 with the same values.

Invariants, per chain:
- folding never fails: `fold_batch_norm` folds text in a forked child, so a crash of the
  pass (SIGSEGV) is a FoldError here, not the end of pytest;
- the folded module is never worse than the original: its largest error against the
  float64 module, relative to the float64 output's largest magnitude, is at most 1.5 times
  the original's own error plus four units in the last place of 1.0 in the element type
  (`_floor`).

`test_every_two_op_chain_...` checks every ordered pair of `chains.OPS` with each sign, in
both directions, many chains to a module; `test_random_chains_...` draws chains of up to
four ops with everything else. CI runs the `ci` profile (conftest.py); for more:

    HYPOTHESIS_PROFILE=long python3 -m pytest -q test/python/test_chain_properties.py
"""

from __future__ import annotations

import itertools
import re

import jax
import ml_dtypes
import numpy as np
import pytest
from chains import DTYPES, OPS, SIGNS, Chain, build
from hypothesis import given, settings
from hypothesis import strategies as st

import stablehlo_bnfold

PROFILE = settings()  # the profile conftest.py loaded

WORSE_FACTOR = 1.5
"""How many times the original's error against float64 the folded module's may be."""


def _floor(element: str) -> float:
    """Four units in the last place of 1.0 in the element type, relative: a correct fold
    rounds each folded weight once and a few sums in another order, a few ulps at the size
    of the output, which an original that happens to be exact (error 0) would otherwise
    fail. `verify`'s floor for f16 and bf16 is the same."""
    return 4 * float(ml_dtypes.finfo(DTYPES[element]).eps)


def _error(actual: np.ndarray, exact: np.ndarray) -> float:
    exact = np.asarray(exact, np.float64)
    return float(np.max(np.abs(np.asarray(actual, np.float64) - exact)) / np.max(np.abs(exact)))


def _fold(text: str):
    """The folded text and report, folded as the API folds text: in a forked child, so that
    a crash of the pass is a FoldError (returned as (None, its message)), not the end of
    pytest."""
    try:
        return stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    except stablehlo_bnfold.FoldError as error:
        return None, str(error)


def assert_folds_without_crashing(chains: list[Chain], element: str) -> str:
    """The folded module of `chains`; an AssertionError naming each chain the pass fails
    on alone, with its error, when it fails on them together."""
    text, _, _ = build(chains, element)
    folded, report = _fold(text)
    if folded is None:
        failed = []
        for chain in chains:
            alone, error = _fold(build([chain], element)[0])
            if alone is None:
                failed.append(f"{chain} ({element}): {error}")
        raise AssertionError("the pass failed:\n" + "\n".join(failed or [report]))
    return folded


def _run(module: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """`run_on_cpu` with XLA's backend optimizations off (LLVM -O0): compiling the
    modules is most of this file's time, and that halves it. Original, folded and float64
    modules are compiled alike, with no fast-math either way."""
    from jax._src import xla_bridge
    from jaxlib import _jax as xc

    backend = xla_bridge.get_backend("cpu")
    device = backend.devices()[0]
    options = xc.CompileOptions()
    options.executable_build_options.debug_options.xla_backend_optimization_level = 0
    executable = backend.compile_and_load(module, xc.DeviceList((device,)), options)
    arguments = [jax.device_put(x, device) for x in inputs]
    outputs = executable.execute_sharded(arguments).disassemble_into_single_device_arrays()
    return [np.asarray(out[0]) for out in outputs]


def worse_than_the_original(chains: list[Chain], element: str) -> list[str]:
    """Fold one module of `chains` in `element` (`assert_folds_without_crashing`), run the
    original, the folded and the float64 module through XLA on the CPU, and return a line
    per chain whose folded output is worse than the invariant allows (none: [])."""
    text, wide, inputs = build(chains, element)
    folded = assert_folds_without_crashing(chains, element)
    with jax.enable_x64(True):  # else device_put makes the float64 inputs float32
        original, after = _run(text, inputs), _run(folded, inputs)
        exact = _run(wide, [x.astype(np.float64) for x in inputs])
    floor, worse = _floor(element), []
    for chain, o, a, e in zip(chains, original, after, exact):
        if not (np.all(np.isfinite(e)) and np.all(np.isfinite(o.astype(np.float64)))) or not np.any(e):
            continue  # the original overflows: nothing to be worse than
        before, now = _error(o, e), _error(a, e)
        if not now <= WORSE_FACTOR * before + floor:
            worse.append(
                f"{chain} ({element}): folded error {now:.3g} > {WORSE_FACTOR} x original "
                f"{before:.3g} + {floor:.3g}"
            )
    return worse


def _pairs(direction: str, sign: str) -> list[Chain]:
    """Every ordered pair of OPS; the map's form, the linear op, a dead channel or a huge
    gamma varying from pair to pair."""
    return [
        Chain(
            direction, ops, signs=sign,
            form=("batch_norm", "multiply_add")[n % 2],
            linear=("convolution", "dot_general")[(n // 2) % 2],
            dead=n % 3 == 0,
            huge=n % 3 == 1,
            seed=n,
        )
        for n, ops in enumerate(itertools.product(OPS, repeat=2))
    ]


ELEMENTS = ("f32", "f16", "bf16")
CASES = list(itertools.product(SIGNS, ELEMENTS))


@pytest.mark.parametrize("sign, element", CASES)
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_every_two_op_chain_folds_without_crashing_and_never_worse_than_the_original(direction, sign, element):
    # Every pair is folded. Compiling is most of the time (about 0.05 s a chain and
    # module), so under the `ci` profile one pair in 2 * len(CASES) is run, each (sign,
    # element) case its own: half of the pairs run in one of the nine cases of a direction.
    chains = _pairs(direction, sign)
    assert_folds_without_crashing(chains, element)
    if PROFILE.max_examples < 1000:
        chains = chains[CASES.index((sign, element)) :: 2 * len(CASES)]
    worse = worse_than_the_original(chains, element)
    assert not worse, "\n".join(worse)


# The three findings this test would have found (each red before its fix, in every type):
# an inverted clamp after a negative scale (scalar bounds; per-channel, one channel
# inverted) gave hi's mirror image; gamma 1e15 before a relu6 or clamp passed a shift the
# size of the mean into the bias (relative error 1 in f32, 2e11 in bf16); two clamps
# rebuilt in one chain crashed the pass (SIGSEGV).
FINDINGS = [
    Chain("forward", ("clamp_inverted",), signs="negative", seed=1),
    Chain("forward", ("clamp_channels",), signs="mixed", seed=2),
    Chain("forward", ("relu6",), huge=True, seed=3),
    Chain("forward", ("clamp",), huge=True, linear="dot_general", seed=4),
    Chain("forward", ("relu6", "relu6"), seed=5),
    Chain("forward", ("relu", "relu"), signs="negative", seed=6),
]


@pytest.mark.parametrize("element", ELEMENTS)
def test_the_forward_clamp_findings_fold_without_crashing_and_never_worse_than_the_original(element):
    worse = worse_than_the_original(FINDINGS, element)
    assert not worse, "\n".join(worse)


_CHAINS = st.builds(
    Chain,
    direction=st.sampled_from(["forward", "backward"]),
    ops=st.lists(st.sampled_from(OPS), min_size=0, max_size=4).map(tuple),
    signs=st.sampled_from(SIGNS),
    form=st.sampled_from(["batch_norm", "multiply_add"]),
    linear=st.sampled_from(["convolution", "dot_general"]),
    kernel=st.sampled_from([1, 2, 3]),
    padded=st.booleans(),
    bias=st.booleans(),
    dead=st.booleans(),
    huge=st.booleans(),
    seed=st.integers(0, 2**16),
)


def _examples(ci: int) -> settings:
    """`ci` examples under the `ci` profile; the loaded profile's count under `long`."""
    if PROFILE.max_examples >= 1000:
        return settings(PROFILE)
    return settings(PROFILE, max_examples=ci)


@_examples(ci=8)
@given(chains=st.lists(_CHAINS, min_size=1, max_size=4), element=st.sampled_from(["f32", "f16", "bf16"]))
def test_random_chains_fold_without_crashing_and_never_worse_than_the_original(chains, element):
    worse = worse_than_the_original(chains, element)
    assert not worse, "\n".join(worse)
