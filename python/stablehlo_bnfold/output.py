"""Writing the command's output to `-o PATH` without destroying what is not ours.

What happens depends on what PATH names, its symbolic links followed (a link stays a link
and its target gets the output, as with `open(PATH, "w")`):

- `-`, `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`: the standard output the command was
  given, written to as it is (a pipe, a terminal, a file opened for appending: never
  truncated, never replaced).
- anything that is not a regular file (a device such as `/dev/null`, a FIFO, a socket, a
  directory, a path through `/proc`): opened and written straight, as `open(PATH, "wb")`
  does it, with its errors ("Is a directory", "No space left on device" on `/dev/full`).
  Never renamed over.
- a regular file, or no file yet: first opened for writing as `open(PATH, "w")` opens it
  but without truncating it, so a file this user may not write (a 0444 file for anyone
  but root) fails with "Permission denied" and is left as it was. The output is written in
  full to an unnamed file in the same directory (Linux `O_TMPFILE`: it has no name, so a
  process killed at any moment, SIGKILL included, leaves nothing behind), given the old
  file's mode, owner and group, then linked under a fresh name and renamed over PATH: a
  reader sees the old file or the new one, never part of one.
- a regular file with other hard links, one whose owner and group the new file cannot be
  given (another user's file we may write), or one in a directory we may not write: the
  output is written in full to an unnamed file first, its room on the disk reserved in the
  file, then copied over the file's contents in place, which keeps the links, the owner,
  the mode and the inode. A failure before the copy (a full disk included) leaves the file
  as it was; a kill during the copy leaves it partly rewritten.

Where `O_TMPFILE` is missing (not Linux, a filesystem without it), the
temporary file is a named one, `.bnfold-XXXXXXXX` beside the target: removed on any error
the process sees, and by the command's parent when its child is killed (`announce`), but
left behind if both are killed with SIGKILL.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from typing import BinaryIO

__all__ = ["STDOUT_NAMES", "write_output"]

STDOUT_NAMES = frozenset({"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})
"""Names of the standard output: written to as given, never opened again."""

_TEMPORARY_PREFIX = ".bnfold-"
_NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT)
"""What opening with O_TMPFILE (or linking it through /proc) fails with where the
filesystem or the system lacks it. ENOENT only for the link through /proc: for the
directory it is checked first."""

Emit = Callable[[BinaryIO], object]


def write_output(path: str, emit: Emit, announce: Callable[[str], None] = lambda name: None) -> None:
    """Have `emit` write the whole output to a binary file, and put it at `path` (see the
    module's docstring); `announce(name)` is called with the name of a temporary file
    while one is visible under a name, for someone to remove should this process die.
    Raises what `emit` raises and OSError for what the system refuses; either way a
    regular file at `path` is left as it was."""
    if path in STDOUT_NAMES:
        emit(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    target = _resolved(path)
    try:
        status = os.stat(target)
    except FileNotFoundError:
        status = None
    if target is None or (status is not None and not stat.S_ISREG(status.st_mode)):
        with open(path, "wb") as file:  # a device, a FIFO, /proc: straight, as the shell does
            emit(file)
        return
    if status is None:
        _replace(target, None, emit, announce)
        return
    # The check open(path, "w") makes, and the file kept open for a rewrite in place.
    fd = os.open(target, os.O_WRONLY | os.O_CLOEXEC)
    try:
        if status.st_nlink > 1 or not _replace(target, status, emit, announce):
            _rewrite_in_place(fd, target, emit)
    finally:
        os.close(fd)


def _resolved(path: str) -> str | None:
    """The file `path` names, its symbolic links followed; None for a name that goes
    through /proc (`/dev/stderr`, `/dev/fd/N`): its links name open files, not paths."""
    path = os.path.join(os.getcwd(), path)  # not abspath: "link/.." is the link's target's parent
    for _ in range(40):  # the kernel's limit on links followed (ELOOP)
        if _through_proc(path):
            return None
        if not os.path.islink(path):
            return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


def _through_proc(path: str) -> bool:
    real = os.path.realpath(os.path.dirname(path))
    return real == "/proc" or real.startswith("/proc/")


def _replace(target: str, status: os.stat_result | None, emit: Emit, announce) -> bool:
    """Write the output to a new file in `target`'s directory with the old file's mode,
    owner and group (`status`; None: a new file, 0666 less the umask) and rename it over
    `target`. False, with nothing changed, when the new file cannot be made there or given
    that owner: the caller rewrites in place."""
    directory = os.path.dirname(target)
    try:
        fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o666)
        named = None
    except AttributeError:  # no O_TMPFILE in this system
        fd, named = _named_temporary(directory, announce, status)
    except OSError as error:
        if status is not None and error.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
            return False
        if error.errno not in _NO_TMPFILE or not os.path.isdir(directory):
            raise
        fd, named = _named_temporary(directory, announce, status)
    try:
        with os.fdopen(fd, "wb", closefd=False) as file:
            emit(file)
        if status is not None:
            if not _same_owner(fd, status):
                return False
            os.fchmod(fd, stat.S_IMODE(status.st_mode))  # after fchown, which clears set-id bits
        if named is None:
            named = _link(fd, directory, target if status is None else None, announce)
            if named == target:  # a new file, linked under its own name
                named = None
                return True
        try:
            os.replace(named, target)
        except PermissionError:  # a sticky directory (/tmp) and another user's file
            return False
        named = None
        return True
    finally:
        os.close(fd)
        if named is not None:
            try:
                os.unlink(named)
            except OSError:
                pass


def _same_owner(fd: int, status: os.stat_result) -> bool:
    """Give the file `fd` the owner and group of `status`; False where that is not allowed."""
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (status.st_uid, status.st_gid):
        return True
    try:
        os.fchown(fd, status.st_uid, status.st_gid)
    except PermissionError:
        return False
    return True


def _named_temporary(directory: str, announce, status: os.stat_result | None) -> tuple[int, str]:
    """A named temporary file (0600 while it is written, so that it never shows the
    output of a file others may not read); a new file's mode, 0666 less the umask, at once."""
    fd, name = tempfile.mkstemp(prefix=_TEMPORARY_PREFIX, dir=directory)
    announce(name)
    if status is None:
        os.fchmod(fd, 0o666 & ~_umask())
    return fd, name


def _link(fd: int, directory: str, new: str | None, announce) -> str:
    """A name for the unnamed file `fd`: `new` when given and still free, else a fresh
    temporary name in `directory` (announced) for the caller to rename."""
    if new is not None:
        try:
            _link_at(fd, new)
            return new
        except FileExistsError:  # made meanwhile by someone else: replaced, as open() would
            pass
    while True:
        name = os.path.join(directory, _TEMPORARY_PREFIX + secrets.token_hex(4))
        announce(name)
        try:
            _link_at(fd, name)
            return name
        except FileExistsError:
            continue


def _link_at(fd: int, name: str) -> None:
    """linkat(/proc/self/fd/FD, name, AT_SYMLINK_FOLLOW): the way to name an O_TMPFILE
    file without privileges. A directory file descriptor is passed because CPython's
    os.link calls link(2), which does not follow the /proc link, unless one is given."""
    directory = os.open(os.path.dirname(name) or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.link(f"/proc/self/fd/{fd}", os.path.basename(name), dst_dir_fd=directory, follow_symlinks=True)
    finally:
        os.close(directory)


def _rewrite_in_place(fd: int, target: str, emit: Emit) -> None:
    """Write the output in full to an unnamed file, then over the contents of the open
    file `fd` (a file kept as it is: its links, owner, mode and inode)."""
    directory = os.path.dirname(target)
    try:
        staging = tempfile.TemporaryFile(dir=directory)
    except OSError:  # a directory we may not write
        staging = tempfile.TemporaryFile()
    with staging:
        emit(staging)
        staging.flush()
        size = staging.tell()
        _reserve(fd, size)
        staging.seek(0)
        with os.fdopen(fd, "wb", closefd=False) as file:
            shutil.copyfileobj(staging, file, 1 << 20)
        os.ftruncate(fd, size)


def _reserve(fd: int, size: int) -> None:
    """Allocate `size` bytes for the open file `fd` before its contents are written over,
    so that a full disk fails here, the file as it was (its old size back), and not half
    way through the copy. Where the system cannot reserve, the copy goes ahead."""
    if size == 0 or not hasattr(os, "posix_fallocate"):
        return
    old = os.fstat(fd).st_size
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as error:
        if error.errno in (errno.EOPNOTSUPP, errno.EINVAL):
            return
        os.ftruncate(fd, old)  # C libraries that emulate it may have written zeros past the end
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
