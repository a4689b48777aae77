"""Reading untrusted input where a crash cannot reach the caller: a forked child process.

jaxlib's C++ bytecode readers (MLIR's and VHLO's) crash on some corrupted inputs, with a
SIGSEGV or an abort, before any Python code sees the module, and loop without end on a
corrupted count (docs/reliability.md). Refusing such bytes beforehand would mean
re-implementing those readers, so the API folds text, bytecode and portable artifacts in a
forked child (`run`), as the command does all its work in one (`cli.console_main`):

- the child reads, folds and writes the result into an anonymous file the parent reads
  back; what it returns (the report) and what it raises come back pickled;
- a child killed by a signal becomes a FoldError with one line that says what it was
  doing, as the command prints it (`death_message`), with the last line it printed (LLVM
  writes its fatal errors to stderr just before it aborts);
- the child's start and its reading are bounded in time (`read_seconds`, from the input's
  size), by an alarm whose default action ends it (`bounded_reading`): the reader is C++
  code, which a Python signal handler could not interrupt. A corrupted count in bytecode
  makes MLIR's reader loop without end (`test/fuzz/hangs/`).

The cost is a fork and one copy of the output through the anonymous file (measured in
docs/reliability.md). MLIR text goes there too: its parser recurses once per nested
region and overflows the stack on deep nesting. Where `os.fork` is missing, `run` calls the work in the caller's process, unbounded.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import io
import os
import pickle
import signal
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import BinaryIO, TypeVar

from jax._src.interpreters import mlir as jax_mlir
from jaxlib.mlir import ir

from .report import FoldError, one_line

__all__ = [
    "READ_SECONDS",
    "READ_SECONDS_PER_GB",
    "bounded_reading",
    "death_message",
    "read_seconds",
    "run",
]

READ_SECONDS = 30.0
"""Time allowed for reading any input, on top of READ_SECONDS_PER_GB: what starting a
child, making a context and reading a small model take on a busy machine, many times over."""

READ_SECONDS_PER_GB = 60.0
"""Time allowed per GB of input: on the machine of docs/reliability.md, reading ResNet-50's
102 MB portable artifact takes 0.3 s (3 s per GB), and the whole fold of 1 GB of weights,
reading and writing, 14 s (bytecode) to 29 s (text)."""

_T = TypeVar("_T")

Work = Callable[[BinaryIO, Callable[[], contextlib.AbstractContextManager]], _T]
"""What `run` calls: `work(output, reading)` writes its output to the binary file
`output` and reads its input inside `with reading():`."""


def read_seconds(size: int) -> float:
    """How long reading an input of `size` bytes may take before it counts as a hang."""
    return READ_SECONDS + READ_SECONDS_PER_GB * size / 1e9


@contextlib.contextmanager
def bounded_reading(seconds: float) -> Iterator[None]:
    """In a child process: end it with SIGALRM unless the block finishes within `seconds`.
    The signal's default action ends the process even inside C++ code, where a Python
    handler would never run; the parent names it (`death_message`)."""
    previous = signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def death_message(phase: str, source: str, number: int, printed: str, seconds: float) -> str:
    """The one line for a process that died from signal `number` while doing `phase` to
    `source` ("" before it started); `printed` is what it wrote to stderr, whose last line
    (LLVM's fatal error, if any) is quoted; `seconds`, the time reading was allowed."""
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    cause = ", ".join([signal.Signals(number).name] + lines[-1:])
    if not phase:
        return one_line(f"internal error: the process died ({cause})")
    if number == signal.SIGKILL:
        return f"{source}: killed (SIGKILL) while {phase} it, most likely for lack of memory"
    if phase == "reading" and number == signal.SIGALRM:
        return f"{source}: invalid input: the MLIR reader did not finish in {seconds:.3g} s"
    if phase == "reading":
        return one_line(f"{source}: invalid input: the MLIR reader crashed on it ({cause})")
    return one_line(f"{source}: internal error: the process crashed while {phase} it ({cause})")


def run(work: Work[_T], *, source: str, size: int) -> tuple[_T, bytes]:
    """`work(output, reading)` in a forked child: what it returns and what it wrote to
    `output`. An exception it raises is raised here; a child killed by a signal (a crash
    in jaxlib's reader, the alarm of a reading that took longer than `read_seconds(size)`,
    the OOM killer) raises FoldError with one line naming `source`.

    >>> report, output = run(fold_into, source="<input>", size=len(data))  # doctest: +SKIP
    """
    if not hasattr(os, "fork"):
        output = io.BytesIO()
        return work(output, contextlib.nullcontext), output.getvalue()
    seconds, parent = read_seconds(size), os.getpid()
    with _anonymous_file("bnfold-output") as output, _anonymous_file("bnfold-stderr") as printed:
        control, child_control = os.pipe()
        child = None
        try:
            sys.stderr.flush()
            with warnings.catch_warnings():
                # Python 3.12+ and JAX (once its backends are up) warn that a process with
                # threads forks, since a child that uses JAX may deadlock: this one uses
                # only MLIR, in a context of its own, and leaves through os._exit.
                warnings.simplefilter("ignore", DeprecationWarning)
                warnings.filterwarnings("ignore", "os.fork", RuntimeWarning)
                # Frozen, the caller's objects are never scanned by the child's garbage
                # collector, which would write to each and so copy every page they are on.
                gc.freeze()
                try:
                    child = os.fork()
                finally:
                    if child != 0:
                        gc.unfreeze()
            if child == 0:
                os.close(control)
                _child(work, output, printed, child_control, seconds, parent)
            os.close(child_control)
            child_control = -1
            said = _read_to_end(control)  # until the child exits
            try:
                _, status = os.waitpid(child, 0)
            except ChildProcessError:  # reaped already: the caller ignores SIGCHLD
                status = None
            child = None
        finally:
            if child is not None:  # interrupted while waiting: the child goes too
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
            os.close(control)
            if child_control >= 0:
                os.close(child_control)
        phases, _, result = said.partition(b"\0")
        phase = phases.decode().rpartition("\n")[2]
        printed.seek(0)
        stderr = printed.read().decode(errors="replace")
        if status is not None and os.WIFSIGNALED(status):
            raise FoldError(death_message(phase, source, os.WTERMSIG(status), stderr, seconds))
        if not result:  # died, by a signal we could not learn (SIGCHLD ignored)
            if phase == "reading":
                raise FoldError(f"{source}: invalid input: the MLIR reader crashed on it")
            raise FoldError(
                f"{source}: internal error: the process folding it ended without a result"
            )
        if stderr:  # logging, as the work would have printed it in this process
            sys.stderr.write(stderr)
        outcome, value, where = pickle.loads(result)
        if outcome == "raised":
            if not isinstance(value, FoldError) and hasattr(value, "add_note"):  # a bug
                value.add_note(f"in the child process that folded {source}:\n{where}")
            raise value
        return value, _contents(output)


def _child(
    work: Work, output: BinaryIO, printed: BinaryIO, control: int, seconds: float, parent: int
) -> None:
    """The child's life: work, say how it went, and leave through os._exit (MLIR's context
    destructor can crash after a failed read; nothing of the parent's may run here)."""
    try:
        # The alarm runs from here, not from the read: until then the child makes a context,
        # and a lock another thread of the parent held at the fork would hang it there.
        bound = contextlib.ExitStack()
        bound.enter_context(bounded_reading(seconds))
        _die_with_parent(parent)
        os.dup2(printed.fileno(), 2)  # LLVM's fatal errors, logging: the parent sees them
        # JAX gives every context it makes one thread pool, whose worker threads stayed
        # behind in the parent: work handed to them here (MLIR's verifier) would wait
        # forever, and so would the pool's destructor. Contexts made here get a pool of
        # their own; the old one is kept, never destroyed.
        _LEFT_BEHIND.append(jax_mlir.global_thread_pool)
        jax_mlir.global_thread_pool = ir.ThreadPool()

        @contextlib.contextmanager
        def reading() -> Iterator[None]:
            os.write(control, b"\nreading")
            try:
                yield
            finally:
                bound.close()
            os.write(control, b"\nfolding")

        try:
            said = ("returned", work(output, reading), "")
        except BaseException as error:
            said = ("raised", error, traceback.format_exc())
        try:
            result = pickle.dumps(said)
        except Exception:  # an exception that cannot be pickled: its words
            words = RuntimeError(f"{type(said[1]).__name__}: {said[1]}")
            result = pickle.dumps(("raised", words, said[2]))
        output.flush()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os.write(control, b"\0")
        view = memoryview(result)
        while view:
            view = view[os.write(control, view) :]
    finally:
        os._exit(0)


def _contents(file: BinaryIO) -> bytes:
    """All of `file` as one bytes object, copied once (a read returns at most 2 GiB)."""
    size, fd = os.fstat(file.fileno()).st_size, file.fileno()
    if size <= 1 << 30:
        return os.pread(fd, size, 0)
    return b"".join(os.pread(fd, 1 << 30, start) for start in range(0, size, 1 << 30))


_LEFT_BEHIND: list[object] = []
"""In a child, the parent's MLIR thread pool (see `_child`)."""


def _read_to_end(fd: int) -> bytes:
    pieces = []
    while piece := os.read(fd, 1 << 16):
        pieces.append(piece)
    return b"".join(pieces)


@contextlib.contextmanager
def _anonymous_file(name: str) -> Iterator[BinaryIO]:
    """A read-write binary file that lives in memory where the system allows (memfd: not
    limited by the size of /tmp), else a temporary file; gone when closed."""
    if hasattr(os, "memfd_create"):
        file = os.fdopen(os.memfd_create(name), "w+b")
    else:
        file = tempfile.TemporaryFile()
    with file:
        yield file


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Linux: the child is killed when the thread that forked it ends, so that a caller
    killed while waiting leaves nothing running; a parent gone before that was set up is
    not waited for."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(128 + signal.SIGKILL)
