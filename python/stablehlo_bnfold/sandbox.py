"""Work that may crash or hang, done in a forked child process where neither can reach
the caller: the one forked-child runner of the API (`run`) and of the command (`command`).

jaxlib's C++ bytecode readers (MLIR's and VHLO's) crash on some corrupted inputs, with a
SIGSEGV or an abort, before any Python code sees the module, and loop without end on a
corrupted count (docs/dev/reliability.md); MLIR's text parser recurses once per nested region
and overflows the stack on deep nesting; the kernel kills a process that runs out of
memory. Refusing such input beforehand would mean re-implementing those readers, so:

- `fork` is the one way a child starts: stdio flushed, the caller's objects frozen for the
  child's garbage collector, the child killed when its parent dies (Linux), and left
  through `os._exit`, so nothing of the parent's (MLIR's context destructors, which can
  crash after a failed read) runs in it;
- the child tells its parent what it is doing in a shared record (`doing`, `_Record`), and
  reads its input under an alarm whose default action ends it even inside C++ code
  (`bounded_reading`, for `read_seconds` of the input's size), with what C++ code prints on
  stderr kept for the parent; a child killed by a signal becomes one line that says what
  it was doing, to which file, and the signal (`death_message`);
- `run` (the API: `fold_batch_norm` on text and bytes, `verification` printing them) does
  `work(output, reading)` in a child, which writes into an anonymous file the parent reads
  back; what it returns and what it raises come back pickled, a death as a FoldError;
- `command` (`stablehlo-bnfold-opt`) runs the whole command in a child, before jax is
  imported, and passes SIGINT, SIGTERM and SIGHUP on to it; a death is one line on stderr
  and exit 1, the child's temporary output file removed.

Nothing here imports jax or jaxlib until a child of `run` needs them: the command's
parent never does. Where `os.fork` is missing, `run` and `command` call the work in the
caller's process, unbounded.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import io
import mmap
import os
import signal
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import BinaryIO, TypeVar

from .basics import one_line

__all__ = [
    "READ_SECONDS",
    "READ_SECONDS_PER_GB",
    "bounded_reading",
    "command",
    "death_message",
    "doing",
    "fork",
    "read_seconds",
    "reading",
    "run",
    "stderr_to",
]

READ_SECONDS = 30.0
"""Time allowed for reading any input, on top of READ_SECONDS_PER_GB: what starting a
child, making a context and reading a small model take on a busy machine, many times over."""

READ_SECONDS_PER_GB = 60.0
"""Time allowed per GB of input: on the machine of docs/dev/reliability.md, reading ResNet-50's
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


# --- what a child is doing ---------------------------------------------------------------------


class _Record:
    """Memory shared by a parent and the child it forks: `phase NUL file NUL temporary
    output file NUL seconds reading may take`, what the parent needs to word the child's
    death and clean up after it."""

    def __init__(self) -> None:
        self._memory = mmap.mmap(-1, 3 * 4096 + 16)  # a phase and two paths

    def set(self, phase: str, file: str, temporary: str = "", seconds: float = 0.0) -> None:
        record = b"\0".join(os.fsencode(part) for part in (phase, file, temporary, str(seconds)))
        self._memory[:] = record[: len(self._memory)].ljust(len(self._memory), b"\0")

    def get(self) -> tuple[str, str, str, float]:
        parts = self._memory[:].rstrip(b"\0").split(b"\0") + [b"", b"", b""]
        phase, file, temporary, seconds = (os.fsdecode(part) for part in parts[:4])
        return phase, file, temporary, float(seconds or 0)


_command: _Record | None = None
"""In the command's child (`command`): what its parent reads."""

_capture: BinaryIO | None = None
"""In the command's child: what C++ code printed on stderr while reading, for the parent."""


def doing(phase: str, file: str, temporary: str = "", *, seconds: float = 0.0) -> None:
    """In the command's child, tell the parent what it is doing (reading, folding,
    verifying, writing `temporary`), for its message should it die; nothing elsewhere."""
    if _command is not None:
        _command.set(phase, file, temporary, seconds)


@contextlib.contextmanager
def reading(source: str, seconds: float) -> Iterator[None]:
    """In the command's child, read `source` inside this block: ended by an alarm after
    `seconds` (a corrupted count in bytecode makes MLIR's reader loop), and what is printed
    on stderr (file descriptor 2, where LLVM writes a fatal error before it aborts) kept
    for the parent's message should the reader crash, and printed as usual if it does not.
    Elsewhere (`main` called in this process) it only says so (`doing`)."""
    doing("reading", source, seconds=seconds)
    if _command is None or _capture is None:
        yield
        return
    _capture.seek(0)
    _capture.truncate()
    try:
        with stderr_to(_capture), bounded_reading(seconds):
            yield
    finally:
        _capture.seek(0)
        if printed := _capture.read():
            sys.stderr.buffer.write(printed)
            sys.stderr.flush()


@contextlib.contextmanager
def stderr_to(file: BinaryIO) -> Iterator[None]:
    """File descriptor 2, where C++ code prints (MLIR's diagnostics in a context of its
    own, LLVM's fatal errors), written to `file` inside this block; Python's `sys.stderr`
    flushed on the way in and out."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(file.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


# --- the fork ----------------------------------------------------------------------------------


def fork(child: Callable[[], int]) -> int:
    """Fork; in the child, `child()` and `os._exit` with the code it returns (1 if it
    raises), stdio flushed; in the parent, the child's process id. The child is killed
    when the thread that forked it ends (Linux), so that a caller killed while waiting
    leaves nothing running; a parent gone before that was set up is not waited for."""
    parent = os.getpid()
    prctl = _prctl()  # found here: the child may not take the loader's lock (dlopen)
    _flush()
    with warnings.catch_warnings():
        # Python 3.12+ and JAX (once its backends are up) warn that a process with threads
        # forks, since a child that uses JAX may deadlock: ours use only MLIR, in contexts
        # of their own, and leave through os._exit.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", "os.fork", RuntimeWarning)
        # Frozen, the caller's objects are never scanned by the child's garbage collector,
        # which would write to each and so copy every page they are on.
        gc.freeze()
        pid = -1
        try:
            pid = os.fork()
        finally:
            if pid != 0:
                gc.unfreeze()
    if pid != 0:
        return pid
    code = 1
    try:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before prctl: nobody waits for the result
            code = 128 + signal.SIGKILL
        else:
            code = child()
    finally:
        _flush()
        os._exit(code)


_PR_SET_PDEATHSIG = 1


@functools.cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return None


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


# --- the API: work in a child, its result back ------------------------------------------------


def run(work: Work[_T], *, source: str, size: int) -> tuple[_T, bytes]:
    """`work(output, reading)` in a forked child: what it returns and what it wrote to
    `output`. An exception it raises is raised here; a child killed by a signal (a crash
    in jaxlib's reader, the alarm of a reading that took longer than `read_seconds(size)`,
    the OOM killer) raises FoldError with one line naming `source`.

    >>> report, output = run(session.fold_into, source="<input>", size=len(data))  # doctest: +SKIP
    """
    if not hasattr(os, "fork"):
        output = io.BytesIO()
        return work(output, contextlib.nullcontext), output.getvalue()
    # Imported here, not in the child: a lock another thread held at the fork would hang
    # it. Not at the top: the command's parent (`command`) does without them.
    import pickle

    from jax._src.interpreters import mlir as jax_mlir  # noqa: F401
    from jaxlib.mlir import ir  # noqa: F401

    from .report import FoldError

    seconds, record = read_seconds(size), _Record()
    with _anonymous_file("bnfold-output") as output, _anonymous_file("bnfold-stderr") as printed:
        control, child_control = os.pipe()
        child = None
        try:
            child = fork(lambda: _run_child(work, output, printed, child_control, record, seconds))
            os.close(child_control)
            child_control = -1
            result = _read_to_end(control)  # until the child exits
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
        phase = record.get()[0]
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


def _run_child(
    work: Work, output: BinaryIO, printed: BinaryIO, control: int, record: _Record, seconds: float
) -> int:
    """A child of `run`: work, send back what came of it, pickled."""
    # The alarm runs from here, not from the read: until then the child makes a context,
    # and a lock another thread of the parent held at the fork would hang it there.
    bound = contextlib.ExitStack()
    bound.enter_context(bounded_reading(seconds))
    os.dup2(printed.fileno(), 2)  # LLVM's fatal errors, logging: the parent sees them
    import pickle  # all three imported by `run` before the fork: no import runs here

    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import ir

    # JAX gives every context it makes one thread pool, whose worker threads stayed behind
    # in the parent: work handed to them here (MLIR's verifier) would wait forever, and so
    # would the pool's destructor. Contexts made here get a pool of their own; the old one
    # is kept, never destroyed.
    _LEFT_BEHIND.append(jax_mlir.global_thread_pool)
    jax_mlir.global_thread_pool = ir.ThreadPool()

    @contextlib.contextmanager
    def reading() -> Iterator[None]:
        record.set("reading", "")
        try:
            yield
        finally:
            bound.close()
        record.set("folding", "")

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
    _flush()
    view = memoryview(result)
    while view:
        view = view[os.write(control, view) :]
    return 0


def _contents(file: BinaryIO) -> bytes:
    """All of `file` as one bytes object, copied once (a read returns at most 2 GiB)."""
    size, fd = os.fstat(file.fileno()).st_size, file.fileno()
    if size <= 1 << 30:
        return os.pread(fd, size, 0)
    return b"".join(os.pread(fd, 1 << 30, start) for start in range(0, size, 1 << 30))


_LEFT_BEHIND: list[object] = []
"""In a child, the parent's MLIR thread pool (see `_run_child`)."""


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


# --- the command: all of it in a child ----------------------------------------------------------

_STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""Sent to the parent, passed on to the child."""

_QUIET_SIGNALS = frozenset(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE") if hasattr(signal, name)
)
"""A child ended by one of these was stopped, not crashed: the parent says nothing."""


def command(main: Callable[[], int], say: Callable[[str], str]) -> int:
    """A command's `main()` in a forked child, the exit code its. A child killed by a
    signal other than an interrupt (a crash inside jaxlib's C++ code, a kill for lack of
    memory) ends with one line on stderr, `say(death_message(...))`, and exit 1; the
    temporary output file it named (`doing`) is removed. SIGINT, SIGTERM and SIGHUP sent
    to this process are passed on to the child, which dies with this process; one of them
    ignored when the command starts (a background job of a script) stays ignored in both.
    Without `os.fork`, `main` runs in this process.

    The caller imports neither jax nor jaxlib before (`main` does, in the child), so this
    process forks with no other thread, and an interrupt at any moment after this function
    starts ends the command with exit 130 and nothing printed: the handlers are set first,
    and are left set until the process exits (with no child left, a signal is dropped), so
    that no interrupt can land in Python's own handler on the way out.

    >>> sys.exit(command(main, lambda message: f"tool: error: {message}"))  # doctest: +SKIP
    """
    if not hasattr(os, "fork"):
        return main()
    global _command, _capture
    parent, children, pending = os.getpid(), [], []
    handlers = {number: signal.getsignal(number) for number in _STOP_SIGNALS}

    def pass_on(number: int, frame: object) -> None:
        if os.getpid() != parent:  # the child, before it has its own handlers: as they will
            signal.signal(number, signal.SIG_DFL)
            signal.raise_signal(number)
        elif children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(children[0], number)
        else:  # before the fork, or after the child was reaped
            pending.append(number)

    # Set before anything else, so that no signal to the parent can come before them.
    for number, handler in handlers.items():
        if handler is not signal.SIG_IGN:
            signal.signal(number, pass_on)
    if hasattr(signal, "SIGCHLD"):  # ignored, inherited: the kernel would reap the child
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # itself, and waitpid would fail
    _command = _Record()
    _capture = tempfile.TemporaryFile()
    child = fork(lambda: _command_child(main, say, handlers))
    children.append(child)
    for number in pending:
        os.kill(child, number)
    _, wait_status = os.waitpid(child, 0)
    children.clear()
    return _ended(wait_status, say)


def _command_child(main: Callable[[], int], say: Callable[[str], str], handlers: dict) -> int:
    """The command's child: signals ignored when the command started stay ignored; the
    others end it by their default action at once, whatever it is doing (an interrupt
    raised as KeyboardInterrupt inside jax's import or MLIR's C++ code can crash the
    process), and the parent, which removes a temporary file the child named, exits 128 +
    the signal's number without a word. Then `main`; its exit code, stdio flushed (`fork`
    skips Python's exit, so that MLIR's destructors, which can crash after a failed read,
    never run)."""
    for number, handler in handlers.items():
        signal.signal(number, signal.SIG_IGN if handler is signal.SIG_IGN else signal.SIG_DFL)
    try:
        code = main()
    except SystemExit as stop:  # argparse's usage errors, --help, --version
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
    except KeyboardInterrupt:
        code = 128 + signal.SIGINT
    except BaseException as error:  # a bug outside main's own handling: one line
        print(say(f"internal error: {type(error).__name__}: {error}"), file=sys.stderr)
        code = 1
    _flush()
    doing("exiting", str(code))  # all said: a crash from here on adds nothing
    return code


def _ended(wait_status: int, say: Callable[[str], str]) -> int:
    """The parent's exit code for how the command's child ended; one line if it was killed."""
    if os.WIFEXITED(wait_status):
        return os.WEXITSTATUS(wait_status)
    number = os.WTERMSIG(wait_status)
    phase, file, temporary, seconds = _command.get()
    if phase == "exiting":  # died in os._exit: its output and messages are complete
        return int(file)
    if temporary:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    if number in _QUIET_SIGNALS:
        return 128 + number
    _capture.seek(0)
    printed = _capture.read().decode(errors="replace")
    print(say(death_message(phase, file, number, printed, seconds)), file=sys.stderr)
    return 1
