"""`-o PATH` for every kind of path: nothing that is not ours is replaced (`output.py`).

Each kind of path gets a test: a new file, a regular file (replaced atomically, its mode,
owner and group kept), one with other hard links (rewritten in place), one we may not
write (refused as `open(path, "w")` refuses it, checked as root and as another user), a
symbolic link (its target written, the link kept), a device node, a FIFO, /dev/stdout, a
full disk, and a writer killed with SIGKILL half-way (nothing left behind). Tests that
need another user run the writer in a forked child that drops root with setuid.
"""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import warnings

import pytest

from stablehlo_bnfold import cli
from stablehlo_bnfold.output import write_output
from test_cli import PROG, assert_one_error, bnfold, folded_example, work  # noqa: F401 (fixtures)

NOBODY = 65534
"""The user and group id a child drops to, to check what a user who is not root gets."""

FOLDED = b"the output\n"


def emit(file) -> None:
    file.write(FOLDED)


def _in_child(body, *, user: int | None = None) -> int:
    """Run `body()` in a forked child, as `user` if given; its exit code: 0 when it
    returned, 13 when it raised PermissionError, 1 for anything else."""
    with warnings.catch_warnings():
        # JAX warns that a fork after its backends started may deadlock a child that uses
        # JAX: this child makes system calls only and leaves through os._exit.
        warnings.filterwarnings("ignore", "os.fork", RuntimeWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.12+: the same
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if user is not None:
                os.setgroups([])
                os.setgid(user)
                os.setuid(user)
            body()
            code = 0
        except PermissionError:
            code = 13
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.fixture
def shared_dir():
    """A directory any user may write (not sticky), removed afterwards."""
    path = pathlib.Path(tempfile.mkdtemp(prefix="bnfold-output-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path)


def _old_file(path: pathlib.Path, *, owner: int | None = None, mode: int = 0o644) -> pathlib.Path:
    """`path` holding b"old\\n", of `owner` (user and group) and `mode`."""
    path.write_bytes(b"old\n")
    if owner is not None:
        os.chown(path, owner, owner)
    path.chmod(mode)
    return path


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")


def test_a_new_file_is_created_with_the_mode_the_umask_allows_and_nothing_else(tmp_path):
    old = os.umask(0o027)
    try:
        write_output(str(tmp_path / "out.mlir"), emit)
    finally:
        os.umask(old)
    assert (tmp_path / "out.mlir").read_bytes() == FOLDED
    assert stat.S_IMODE((tmp_path / "out.mlir").stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["out.mlir"]


def test_a_regular_file_is_replaced_whole_keeping_its_mode(tmp_path):
    out = _old_file(tmp_path / "out.mlir", mode=0o604)
    inode = out.stat().st_ino
    write_output(str(out), emit)
    assert out.read_bytes() == FOLDED
    assert out.stat().st_ino != inode  # renamed over: a reader never sees half a file
    assert stat.S_IMODE(out.stat().st_mode) == 0o604
    assert os.listdir(tmp_path) == ["out.mlir"]


@needs_root
def test_a_file_of_another_user_keeps_its_owner_and_group(tmp_path):
    out = _old_file(tmp_path / "out.mlir", owner=NOBODY, mode=0o640)
    write_output(str(out), emit)
    assert out.read_bytes() == FOLDED
    assert (out.stat().st_uid, out.stat().st_gid, stat.S_IMODE(out.stat().st_mode)) == (NOBODY, NOBODY, 0o640)


@needs_root
def test_a_file_of_another_user_that_we_may_write_but_not_chown_is_rewritten_in_place(shared_dir):
    out = _old_file(shared_dir / "theirs.mlir", mode=0o666)  # root's file, which anybody may write
    inode = out.stat().st_ino
    assert _in_child(lambda: write_output(str(out), emit), user=NOBODY) == 0
    assert out.read_bytes() == FOLDED
    assert (out.stat().st_uid, out.stat().st_ino, stat.S_IMODE(out.stat().st_mode)) == (0, inode, 0o666)
    assert os.listdir(shared_dir) == ["theirs.mlir"]


def test_a_file_with_other_hard_links_is_rewritten_in_place_keeping_them(tmp_path):
    out, other = tmp_path / "out.mlir", tmp_path / "other-name.mlir"
    out.write_bytes(b"old contents, longer than the output\n")
    os.link(out, other)
    write_output(str(out), emit)
    assert out.read_bytes() == other.read_bytes() == FOLDED
    assert out.stat().st_ino == other.stat().st_ino and out.stat().st_nlink == 2
    assert sorted(os.listdir(tmp_path)) == ["other-name.mlir", "out.mlir"]


def _open_for_writing(path: pathlib.Path) -> None:
    with open(path, "w"):
        pass


@pytest.mark.parametrize("user", [None, NOBODY], ids=["this-user", "not-root"])
def test_a_read_only_file_is_written_exactly_when_open_for_writing_would_be(shared_dir, user):
    if user is not None and os.geteuid() != 0:
        user = None  # already not root
    out = _old_file(shared_dir / "readonly.mlir", owner=user, mode=0o444)
    allowed = _in_child(lambda: _open_for_writing(shared_dir / "probe"), user=user) == 0  # the directory
    (shared_dir / "probe").unlink(missing_ok=True)
    expected = _in_child(lambda: os.close(os.open(out, os.O_WRONLY)), user=user)
    got = _in_child(lambda: write_output(str(out), emit), user=user)
    assert allowed and got == expected
    assert out.read_bytes() == (FOLDED if expected == 0 else b"old\n")
    if os.geteuid() != 0 or user is not None:  # not root: open(path, "w") refuses
        assert expected == 13
    assert sorted(os.listdir(shared_dir)) == ["readonly.mlir"]


@needs_root
def test_the_command_says_permission_denied_in_one_line_for_a_file_it_may_not_write(shared_dir):
    out = _old_file(shared_dir / "readonly.mlir", owner=NOBODY, mode=0o444)
    said, tell = os.pipe()
    cli._import_the_pass()  # as root: Python's own files may be in /root

    def write() -> None:
        try:
            cli._write(str(out), emit)
        except cli._Failure as failure:
            os.write(tell, str(failure).encode())
            raise PermissionError from None

    assert _in_child(write, user=NOBODY) == 13
    os.close(tell)
    with os.fdopen(said, "rb") as pipe:
        line = pipe.read().decode()
    assert line == f"{PROG}: error: {out}: cannot write: Permission denied"
    assert out.read_bytes() == b"old\n" and os.listdir(shared_dir) == ["readonly.mlir"]


def test_the_command_exits_1_with_one_line_for_a_file_it_may_not_write(work):
    # A file in a directory that is not a directory: what a non-root user meets with a
    # 0444 file gives the same line, "cannot write: <the system's reason>".
    (work / "afile").write_bytes(b"")
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "-o", "afile/out.mlir")
    assert_one_error(run, 1, rf"{PROG}: error: afile/out\.mlir: cannot write: Not a directory")


def test_a_symbolic_link_is_followed_and_stays_a_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "model.mlir"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.mlir"
    link.symlink_to(os.path.join("real", "model.mlir"))
    chain = tmp_path / "chain.mlir"
    chain.symlink_to("link.mlir")
    write_output(str(chain), emit)
    assert chain.is_symlink() and link.is_symlink()
    assert target.read_bytes() == FOLDED
    assert sorted(os.listdir(tmp_path)) == ["chain.mlir", "link.mlir", "real"]
    assert os.listdir(tmp_path / "real") == ["model.mlir"]


def test_a_dangling_symbolic_link_creates_its_target(tmp_path):
    link = tmp_path / "link.mlir"
    link.symlink_to("target.mlir")
    write_output(str(link), emit)
    assert link.is_symlink() and (tmp_path / "target.mlir").read_bytes() == FOLDED


def test_a_device_node_given_as_output_stays_a_device(work):
    _device(work / "null", 1, 3)  # /dev/null's numbers, ours to lose
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "-o", "null")
    assert (run.returncode, run.stdout, run.stderr) == (0, b"", "")
    assert stat.S_ISCHR((work / "null").stat().st_mode)
    assert (work / "null").stat().st_rdev == os.makedev(1, 3)
    assert sorted(os.listdir(work)) == ["model.mlir", "null"]


def test_a_fifo_given_as_output_gets_the_output_and_stays_a_fifo(work, folded_example):
    fifo = work / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "-o", "fifo")
    reader.join(timeout=300)
    assert (run.returncode, run.stderr) == (0, "")
    assert received == [folded_example.encode()]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(os.listdir(work)) == ["fifo", "model.mlir"]


def test_dev_stdout_is_written_to_as_the_standard_output_never_opened_or_replaced(monkeypatch):
    # In this process, so that a regression cannot replace the machine's /dev/stdout.
    import io

    stdout = io.TextIOWrapper(io.BytesIO())
    monkeypatch.setattr(sys, "stdout", stdout)
    write_output("/dev/stdout", emit)
    assert stdout.buffer.getvalue() == FOLDED


def test_the_standard_output_as_a_file_name_is_appended_to_not_replaced(work, folded_example):
    # /dev/fd/1 is /dev/stdout's target: a file opened for appending (`>> log`) keeps its
    # lines and its inode. (Not /dev/stdout itself: the code before this test renamed a
    # regular file over the machine's /dev/stdout.)
    log = work / "log.txt"
    log.write_bytes(b"earlier lines\n")
    inode = log.stat().st_ino
    with open(log, "ab") as stdout:
        result = subprocess.run(
            [sys.executable, "-m", "stablehlo_bnfold.cli", "model.mlir", "--stablehlo-fold-batch-norm", "-o", "/dev/fd/1"],
            cwd=work,
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=300,
        )
    assert (result.returncode, result.stderr) == (0, b"")
    assert log.read_bytes() == b"earlier lines\n" + folded_example.encode()
    assert log.stat().st_ino == inode


def _device(path: pathlib.Path, major: int, minor: int) -> None:
    """A character device node of ours: tests never name the machine's /dev nodes as
    output, which the code before these tests replaced with regular files."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(major, minor))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")


@pytest.mark.parametrize("how", ["stdout", "-o"])
def test_a_full_disk_gives_one_line_and_exit_1(work, how):
    _device(work / "full", 1, 7)  # /dev/full's numbers: every write fails with ENOSPC
    args = ["model.mlir", "--stablehlo-fold-batch-norm"] + (["-o", "full"] if how == "-o" else [])
    with open(work / "full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "stablehlo_bnfold.cli", *args],
            cwd=work,
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=300,
        )
    stderr = result.stderr.decode()
    assert "Traceback" not in stderr and len(stderr.splitlines()) == 1, stderr
    assert result.returncode == 1
    where = "<stdout>" if how == "stdout" else "full"
    assert stderr.strip() == f"{PROG}: error: {where}: cannot write: No space left on device"
    assert stat.S_ISCHR((work / "full").stat().st_mode)


@pytest.mark.parametrize("existing", [False, True], ids=["new", "replaced"])
def test_a_writer_killed_half_way_leaves_nothing_behind(tmp_path, existing):
    out = tmp_path / "out.mlir"
    if existing:
        out.write_bytes(b"old\n")

    def killed_half_way(file) -> None:
        file.write(b"half of the output" * 100000)
        file.flush()
        os.kill(os.getpid(), signal.SIGKILL)  # no handler, no cleanup can run

    assert _in_child(lambda: write_output(str(out), killed_half_way)) == -signal.SIGKILL
    assert os.listdir(tmp_path) == (["out.mlir"] if existing else [])
    if existing:
        assert out.read_bytes() == b"old\n"


def test_a_directory_given_as_output_is_refused_and_left_alone(tmp_path):
    (tmp_path / "adir").mkdir()
    with pytest.raises(IsADirectoryError):
        write_output(str(tmp_path / "adir"), emit)
    assert list((tmp_path / "adir").iterdir()) == []


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs of our own, where a write past its room fails with ENOSPC."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs needs CAP_SYS_ADMIN")
    yield disk
    subprocess.run(["umount", str(disk)], check=True)


def test_a_disk_that_fills_during_an_in_place_rewrite_leaves_the_file_as_it_was(small_disk):
    # The output (600 kB) fits beside the old file (100 kB) once, as the staging copy, but
    # not twice: the rewrite must find that out before it touches the old contents.
    out, other = small_disk / "out.mlir", small_disk / "other-name.mlir"
    out.write_bytes(b"old\n" * 25_000)
    os.link(out, other)
    with pytest.raises(OSError) as raised:
        write_output(str(out), lambda file: file.write(b"new\n" * 150_000))
    assert raised.value.errno == errno.ENOSPC
    assert out.read_bytes() == b"old\n" * 25_000
    assert sorted(os.listdir(small_disk)) == ["other-name.mlir", "out.mlir"]


def test_dot_dot_after_a_linked_directory_names_the_file_open_would_write(tmp_path):
    # "linked/../out.mlir" is "real/out.mlir" to the kernel ("linked" is "real/sub");
    # "out.mlir" beside "linked" is another file, which must be left alone.
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "linked").symlink_to(os.path.join("real", "sub"))
    bystander = _old_file(tmp_path / "out.mlir")
    write_output(str(tmp_path / "linked" / ".." / "out.mlir"), emit)
    assert (tmp_path / "real" / "out.mlir").read_bytes() == FOLDED
    assert bystander.read_bytes() == b"old\n"


def test_without_o_tmpfile_the_named_copy_of_a_private_file_is_never_readable_by_others(tmp_path, monkeypatch):
    # Where O_TMPFILE is missing the output is written under a name beside the file: while
    # it is written, it must not be readable by users the file itself keeps out.
    monkeypatch.delattr(os, "O_TMPFILE")
    out = _old_file(tmp_path / "secret.mlir", mode=0o600)
    modes = []

    def emit_and_look(file) -> None:
        file.write(FOLDED)
        file.flush()
        modes.append(stat.S_IMODE(os.fstat(file.fileno()).st_mode))

    old = os.umask(0o022)
    try:
        write_output(str(out), emit_and_look)
    finally:
        os.umask(old)
    assert out.read_bytes() == FOLDED and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert modes and modes[0] & 0o077 == 0, oct(modes[0])
    assert os.listdir(tmp_path) == ["secret.mlir"]
