"""Fold inference batch norm into the preceding convolution or dot_general in StableHLO.

>>> import stablehlo_bnfold
>>> folded = stablehlo_bnfold.fold_batch_norm(exported)            # doctest: +SKIP
>>> folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)  # doctest: +SKIP
>>> print(report)                                                    # doctest: +SKIP
2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed
>>> prepare, folded = stablehlo_bnfold.fold_parameters(exported, parameters=0)  # doctest: +SKIP
>>> y = folded.call(prepare.call(variables), x)                      # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .api import fold_batch_norm

if TYPE_CHECKING:  # imported when first asked for (`__getattr__`)
    from .parameters import fold_parameters
    from .report import FoldError, FoldReport
    from .verification import Verification, verify

__all__ = [
    "FoldError", "FoldReport", "Verification", "__version__", "fold_batch_norm", "fold_parameters", "verify",
]

__version__ = "0.1.0"

_LAZY = {
    "FoldError": "report", "FoldReport": "report", "Verification": "verification", "verify": "verification",
    "fold_parameters": "parameters",
}
"""Public names imported when first asked for (PEP 562): they need jaxlib, which the
command's --help, --version and start-up do without (`stablehlo_bnfold.basics`)."""


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
