"""Hypothesis profiles for the property tests (test_properties.py and
test_chain_properties.py).

- `ci` (the default): few examples per test, derandomized so that every run draws the same
  examples, no example database, no deadline (XLA compiles take a variable time).
- `long`: at least 1000 examples per test, random (test_chain_properties.py also runs
  every two-op pair instead of half of them), for a run by hand:

      HYPOTHESIS_PROFILE=long python3 -m pytest -q test/python/test_properties.py
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config, items):
    """Run the whole-network tests (`-m networks`) last.

    Exporting and compiling whole Keras and Flax networks grows the pytest process to about
    8 GB, and it keeps that memory. Every test after them that forks (the API folds `str`
    and `bytes` in a forked child; the CLI tests start subprocesses) then pays for copying
    that address space (one property test took 18.6 s after them instead of 6.6 s).
    """
    items.sort(key=lambda item: item.get_closest_marker("networks") is not None)
