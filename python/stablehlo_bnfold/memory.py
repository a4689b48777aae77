"""Whether folding an input fits in the memory this process may still use, judged before
the input is parsed, so that a module too large for the machine stops with a clear message
instead of being killed half-way.

MLIR keeps every constant it parses or builds until its context dies, so a fold holds the
input's constants and the folded ones at once, plus what each format's reader and writer
add. `PEAK_PER_INPUT_BYTE` is the resident memory a fold adds, per byte of input, for a
module whose constants are all folded kernels (the worst case), as `benchmarks/limits.py`
measures it through the CLI (docs/dev/reliability.md, "Limits"). A module with less to fold
needs less, so the estimate errs on the side of refusing.
"""

from __future__ import annotations

from collections.abc import Callable

try:
    import resource
except ImportError:  # not on Windows
    resource = None

from .io import Format
from .report import FoldError

__all__ = [
    "HELD_PER_INPUT_BYTE",
    "PEAK_PER_INPUT_BYTE",
    "available_bytes",
    "check_fits",
    "estimate_bytes",
]

PEAK_PER_INPUT_BYTE = {
    Format.BYTECODE: 3.3,
    Format.PORTABLE: 3.3,
    Format.TEXT: 3.3,
    Format.EXPORTED: 3.3 + 3.0,
}
"""Peak resident memory above the imports over the input file's size, all of it folded,
read from the file and written back in the same format (`--emit-bytecode` for binary
input). The worst case is one large constant: MLIR's reader holds the file's bytes while
it parses (text: its hex), beside the parsed constant and the folded one, and its text
printer formats a whole attribute's hex before writing it. Measured through the command's
`main` on one f32 kernel (`test_memory.py`, and 3x3x2048x4096 by hand): 3.05x (bytecode,
302 MB), 3.06x (portable artifact, 302 MB), 3.21x (bytecode, 75 MB, where the fixed part
weighs more), 3.03x (text, 604 MB) and 3.11x (text, 151 MB); the issue measured 2.9x for
a 2 GiB constant in bytecode. Many smaller kernels need less (2.06x, 2.07x and 1.53x for
1 GB of 36 MiB kernels, docs/dev/reliability.md). The factor keeps a margin over the worst.
A `jax.export` serialization is a portable artifact plus, not measured but counted, three
copies held in memory: the file read whole, the artifact written, and the flatbuffer jax
builds from it."""

HELD_PER_INPUT_BYTE = 1.0
"""Added when the input is held in memory while it is folded (stdin, `--verify`,
`--split-input-file`, the API given bytes or text)."""

_FIXED = 64 << 20
"""Added to every estimate: the pass's own working set on a small module."""


def estimate_bytes(size: int, fmt: Format, *, held: bool = False) -> int:
    """The memory folding an input of `size` bytes in `fmt` may add, at most; `held` when
    the input stays in memory meanwhile."""
    return _FIXED + int(size * (PEAK_PER_INPUT_BYTE[fmt] + (HELD_PER_INPUT_BYTE if held else 0)))


def available_bytes() -> int | None:
    """What this process may still allocate: the least of the machine's available memory
    (MemAvailable), its cgroup's room (memory.max less memory.current, cgroup v2) and its
    address-space room (RLIMIT_AS less the size it has mapped). None where none is known."""
    rooms = [
        _meminfo("MemAvailable"),
        _cgroup_room(),
        _address_space_room(),
    ]
    known = [room for room in rooms if room is not None]
    return min(known) if known else None


def check_fits(
    size: int,
    fmt: Format,
    source: str,
    *,
    held: bool = False,
    available: Callable[[], int | None] = available_bytes,
) -> None:
    """FoldError naming `source` when folding `size` bytes of `fmt` would not fit in what
    `available` returns (None: unknown, no check).

    >>> check_fits(os.path.getsize("model.mlirbc"), Format.BYTECODE, "model.mlirbc")  # doctest: +SKIP
    """
    need, room = estimate_bytes(size, fmt, held=held), available()
    if room is not None and need > room:
        raise FoldError(
            f"{source}: not enough memory to fold: a {_gigabytes(size)} {fmt.value} input "
            f"needs about {_gigabytes(need)}, {_gigabytes(room)} available"
        )


def _gigabytes(size: int) -> str:
    return f"{size / 1e9:.2f} GB"


def _meminfo(field: str, path: str = "/proc/meminfo", *, unit: int = 1024) -> int | None:
    """`field` of a `name: value [kB]` or `name value` file, in bytes."""
    try:
        with open(path) as handle:
            for line in handle:
                parts = line.split()
                if parts and parts[0].rstrip(":") == field:
                    return int(parts[1]) * unit
    except (OSError, ValueError, IndexError):
        pass
    return None


_CGROUPS = (  # (version 2 or 1: mount, limit, usage, the page cache it may reclaim)
    ("/sys/fs/cgroup", "memory.max", "memory.current", ("inactive_file", "active_file")),
    (
        "/sys/fs/cgroup/memory",
        "memory.limit_in_bytes",
        "memory.usage_in_bytes",
        ("total_inactive_file", "total_active_file"),
    ),
)


def _cgroup_room() -> int | None:
    """The room under this process's cgroup memory limit, if it has one: the limit less
    the usage, plus the page cache in it, which the kernel reclaims before it kills.
    Inside a cgroup namespace the mount is the process's own group."""
    for mount, limit_file, usage_file, reclaimable in _CGROUPS:
        try:
            with open(f"{mount}/{limit_file}") as handle:
                limit = handle.read().strip()
            if limit == "max" or int(limit) >= 1 << 62:  # no limit
                return None
            with open(f"{mount}/{usage_file}") as handle:
                usage = int(handle.read())
            cache = sum(_meminfo(name, f"{mount}/memory.stat", unit=1) or 0 for name in reclaimable)
            return int(limit) - usage + cache
        except (OSError, ValueError):
            continue
    return None


def _address_space_room() -> int | None:
    """RLIMIT_AS less VmSize (`ulimit -v`), if there is a limit."""
    if resource is None:
        return None
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    if limit == resource.RLIM_INFINITY:
        return None
    mapped = _meminfo("VmSize", "/proc/self/status")
    return None if mapped is None else limit - mapped
