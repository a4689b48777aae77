"""The `stablehlo-bnfold-opt` command's entry point (pyproject's `[project.scripts]`, and
`python -m stablehlo_bnfold`): from its first line, before the command (`cli`, `sandbox`)
is imported, SIGINT, SIGTERM and SIGHUP end the process at once with exit 128 + the
signal's number and nothing printed, instead of a KeyboardInterrupt traceback from inside
an import. `sandbox.command` sets its own handlers as it starts (the child gets the
default actions, the parent passes signals on to it). A signal ignored when the command
starts (a background job of a script) stays ignored.

Only the command imports this module: a library's importer keeps its own handlers.
"""

import os
import signal

_PREVIOUS = {}


def _stop(number: int, frame: object) -> None:
    os._exit(128 + number)  # nothing to clean up yet: no output file is opened before `cli`


for _name in ("SIGINT", "SIGTERM", "SIGHUP"):
    _number = getattr(signal, _name, None)
    if _number is not None and signal.getsignal(_number) is not signal.SIG_IGN:
        _PREVIOUS[_number] = signal.signal(_number, _stop)

from . import cli  # noqa: E402  (after the handlers, which is the point of this module)


def console_main() -> int:
    """`cli.console_main`; where `os.fork` is missing and the command runs in this process,
    with the handlers it had when it started, so that an interrupt leaves no temporary
    output file."""
    if not hasattr(os, "fork"):
        for number, handler in _PREVIOUS.items():
            signal.signal(number, handler)
    return cli.console_main()
