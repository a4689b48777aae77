"""The command's start-up: what it imports before it needs to, and interrupts while it starts.

`stablehlo-bnfold-opt` imports jax (about 2 s) only once its arguments are parsed, and only
in its forked child (`cli._import_the_pass`); an interrupt at any moment of that exits 130
and prints nothing, and an interrupt ignored when the command starts stays ignored.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from test_cli import EXAMPLE, _blocked_reading_a_pipe, _child_of, interruptible

# Delays after the command's child exists (its parent has set its handlers by then) at
# which the test interrupts it. The child is importing jax for about the first 2 s, then
# reading a standard input that never ends, so every run is interrupted before it could
# finish: none may exit with anything but 130, or print anything.
INTERRUPT_DELAYS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def _imported_by(*argv: str) -> list[str]:
    """The jax and jaxlib modules loaded once `main(argv)` has run, in a fresh process."""
    script = textwrap.dedent(
        f"""
        import sys
        from stablehlo_bnfold import cli
        try:
            cli.main({list(argv)!r})
        except SystemExit:
            pass
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib")))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    return eval(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["--no-such-flag"]])
def test_help_version_and_usage_errors_do_not_import_jax(argv):
    assert _imported_by(*argv) == []


def test_importing_the_package_does_not_import_jax_until_its_api_is_used():
    script = (
        "import sys, stablehlo_bnfold\n"
        "before = [m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib')]\n"
        "stablehlo_bnfold.FoldError\n"
        "print(before, 'jaxlib' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "[] True", result.stderr


def _command(*, ignoring_interrupts: bool = False, **options) -> subprocess.Popen:
    """The command folding a standard input that never ends, in a session of its own (so
    that a signal to its process group reaches parent and child, as a terminal's Ctrl-C
    does); started with SIGINT ignored if asked, as `sh` starts a background job (`trap ''
    INT` is inherited through exec; a preexec_fn would fork this process, which runs JAX),
    else with SIGINT at its default (`interruptible`)."""
    command = [sys.executable, "-m", "stablehlo_bnfold.cli", "--stablehlo-fold-batch-norm", "-o", "out.mlir"]
    if ignoring_interrupts:
        command = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *command]
    else:
        command = interruptible(command)
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        **options,
    )


def _wait_until_reading(child: int) -> None:
    """Until the command's `child` has imported jax and blocks reading its stdin."""
    for _ in range(2400):
        if _blocked_reading_a_pipe(child):
            return
        time.sleep(0.05)
    raise AssertionError(f"process {child} never blocked reading its standard input")


def _finish(process: subprocess.Popen, rest: bytes = b"") -> tuple[bytes, bytes]:
    """Write `rest` of the input, close it, and wait: stdout and stderr."""
    try:
        stdout, stderr = process.communicate(rest, timeout=300)
    except BrokenPipeError:  # the command is gone already
        process.wait(timeout=300)
        stdout, stderr = process.stdout.read(), process.stderr.read()
    return stdout, stderr


@pytest.mark.parametrize("delay", INTERRUPT_DELAYS)
def test_an_interrupt_at_any_moment_of_start_up_exits_130_and_prints_nothing(tmp_path, delay):
    process = _command(cwd=tmp_path)
    process.stdin.write(EXAMPLE.read_bytes()[:100])
    process.stdin.flush()
    _child_of(process.pid)
    time.sleep(delay)  # not a timing assertion: every delay must give the same result
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=300)  # stdin still open: the input never ended
    stdout, stderr = process.stdout.read(), process.stderr.read()
    process.stdin.close()
    assert (process.returncode, stdout, stderr.decode()) == (128 + signal.SIGINT, b"", "")
    assert list(tmp_path.iterdir()) == []


def test_an_interrupt_ignored_when_the_command_starts_stays_ignored(tmp_path):
    # A background job of a script (`cmd &` without job control) starts with SIGINT
    # ignored: Ctrl-C in the terminal is for the script, not for the job.
    process = _command(cwd=tmp_path, ignoring_interrupts=True)
    data = EXAMPLE.read_bytes()
    process.stdin.write(data[:100])
    process.stdin.flush()
    child = _child_of(process.pid)
    os.killpg(process.pid, signal.SIGINT)  # while the child imports jax
    _wait_until_reading(child)
    os.killpg(process.pid, signal.SIGINT)  # while it reads
    stdout, stderr = _finish(process, data[100:])
    assert (process.returncode, stdout, stderr.decode()) == (0, b"", "")
    assert "batch_norm_inference" not in (tmp_path / "out.mlir").read_text()



def test_the_parent_process_never_loads_jax_so_it_forks_without_threads(tmp_path):
    # Where the command's process is while its child works: it must never have imported
    # jax (whose import an interrupt used to cut, with a traceback or a crash) nor have
    # jax's threads when it forks ("os.fork() was called ... JAX is multithreaded").
    process = _command(cwd=tmp_path)
    process.stdin.write(EXAMPLE.read_bytes()[:100])
    process.stdin.flush()
    child = _child_of(process.pid)
    _wait_until_reading(child)
    with open(f"/proc/{process.pid}/maps") as handle:
        parent_maps = handle.read()
    with open(f"/proc/{child}/maps") as handle:
        child_maps = handle.read()
    with open(f"/proc/{process.pid}/status") as handle:
        threads = next(line for line in handle if line.startswith("Threads:")).split()[1]
    os.killpg(process.pid, signal.SIGTERM)
    _finish(process)
    assert "jaxlib" in child_maps  # the check below looks for the right name
    assert "jaxlib" not in parent_maps
    assert threads == "1"
