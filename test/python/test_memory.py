"""`stablehlo_bnfold.memory`: the estimate a fold is checked against before reading, and
where the memory left is read from (the machine, a cgroup, the address-space limit)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap

import pytest

from stablehlo_bnfold import FoldError, memory
from stablehlo_bnfold.io import Format

GB = 10**9


@pytest.mark.parametrize("fmt", list(Format))
def test_the_estimate_grows_with_the_input_and_with_holding_it(fmt):
    small, large = memory.estimate_bytes(GB, fmt), memory.estimate_bytes(2 * GB, fmt)
    assert large - small == pytest.approx(memory.PEAK_PER_INPUT_BYTE[fmt] * GB, rel=1e-9)
    held = memory.estimate_bytes(GB, fmt, held=True)
    assert held - small == pytest.approx(memory.HELD_PER_INPUT_BYTE * GB, rel=1e-9)
    # The folded constants come on top of the parsed ones: never less than the input.
    assert memory.PEAK_PER_INPUT_BYTE[Format.BYTECODE] >= 2


def test_check_fits_stops_with_the_sizes_when_the_estimate_exceeds_the_room():
    with pytest.raises(FoldError) as raised:
        memory.check_fits(GB, Format.BYTECODE, "model.mlirbc", available=lambda: 2 * GB)
    assert str(raised.value) == (
        "model.mlirbc: not enough memory to fold: a 1.00 GB bytecode input needs about "
        f"{memory.estimate_bytes(GB, Format.BYTECODE) / GB:.2f} GB, 2.00 GB available"
    )
    memory.check_fits(GB, Format.BYTECODE, "model.mlirbc", available=lambda: 4 * GB)
    memory.check_fits(10**6 * GB, Format.TEXT, "model.mlir", available=lambda: None)  # unknown
    with pytest.raises(FoldError, match=r"needs about 4\.\d\d GB, 4\.00 GB available$"):
        # 3.4 GB fits in 4 GB; with the 1 GB input held it does not.
        memory.check_fits(GB, Format.BYTECODE, "<stdin>", held=True, available=lambda: 4 * GB)


def _cgroup(root, version: int, limit: str, usage: int, inactive: int, active: int = 0) -> tuple:
    names = {
        2: ("memory.max", "memory.current", ("inactive_file", "active_file")),
        1: ("memory.limit_in_bytes", "memory.usage_in_bytes", ("total_inactive_file", "total_active_file")),
    }[version]
    root.mkdir(exist_ok=True)
    (root / names[0]).write_text(limit + "\n")
    (root / names[1]).write_text(f"{usage}\n")
    (root / "memory.stat").write_text(
        f"anon 5\n{names[2][0]} {inactive}\n{names[2][1]} {active}\nshmem 7\n"
    )
    return (str(root), *names)


@pytest.mark.parametrize("version", [2, 1])
def test_the_cgroup_room_is_its_limit_less_what_it_uses_that_cannot_be_reclaimed(
    tmp_path, monkeypatch, version
):
    # The page cache, active or not, is reclaimed before the kernel kills.
    mount = _cgroup(tmp_path / "g", version, str(8 * GB), 5 * GB, 1 * GB, 2 * GB)
    monkeypatch.setattr(memory, "_CGROUPS", (mount,))
    assert memory._cgroup_room() == 6 * GB
    unlimited = "max" if version == 2 else str(2**63 - 4096)
    monkeypatch.setattr(memory, "_CGROUPS", (_cgroup(tmp_path / "u", version, unlimited, 5, 0),))
    assert memory._cgroup_room() is None
    monkeypatch.setattr(memory, "_CGROUPS", ((str(tmp_path / "none"), "a", "b", "c"), mount))
    assert memory._cgroup_room() == 6 * GB  # the first mount that exists


def test_the_address_space_room_is_the_limit_less_what_is_mapped(monkeypatch):
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY,) * 2)
    assert memory._address_space_room() is None
    monkeypatch.setattr(resource, "getrlimit", lambda which: (64 * GB, 64 * GB))
    mapped = memory._meminfo("VmSize", "/proc/self/status")
    assert mapped and 64 * GB - memory._address_space_room() == pytest.approx(mapped, rel=0.05)


def test_available_is_the_least_room_known(monkeypatch):
    monkeypatch.setattr(memory, "_meminfo", lambda field, *a, **k: 9 * GB)
    monkeypatch.setattr(memory, "_cgroup_room", lambda: 4 * GB)
    monkeypatch.setattr(memory, "_address_space_room", lambda: None)
    assert memory.available_bytes() == 4 * GB
    monkeypatch.setattr(memory, "_cgroup_room", lambda: None)
    assert memory.available_bytes() == 9 * GB
    monkeypatch.setattr(memory, "_meminfo", lambda field, *a, **k: None)
    assert memory.available_bytes() is None


def test_meminfo_reads_kilobytes_and_plain_numbers(tmp_path):
    (tmp_path / "meminfo").write_text("MemTotal:  100 kB\nMemAvailable:\t  40 kB\n")
    assert memory._meminfo("MemAvailable", str(tmp_path / "meminfo")) == 40 * 1024
    assert memory._meminfo("Missing", str(tmp_path / "meminfo")) is None
    assert memory._meminfo("MemTotal", str(tmp_path / "absent")) is None
    (tmp_path / "stat").write_text("inactive_file 123\n")
    assert memory._meminfo("inactive_file", str(tmp_path / "stat"), unit=1) == 123


# One convolution whose 3x3x1024x2048 f32 kernel (75 MB, seeded) is folded: a single large
# constant is the worst case per input byte, since MLIR's reader and printer each hold a
# whole attribute's bytes (or hex) at once beside the parsed and the folded constant.
_BUILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    from jax._src.interpreters.mlir import make_ir_context
    from jaxlib.mlir import ir
    path, fmt = sys.argv[1:]
    a, b, k, v = "tensor<1x8x8x1024xf32>", "tensor<1x8x8x2048xf32>", "tensor<3x3x1024x2048xf32>", "tensor<2048xf32>"
    text = (
        f"func.func @main(%x: {a}) -> {b} {{\\n"
        f"  %k = stablehlo.constant dense<0.0> : {k}\\n"
        f"  %s = stablehlo.constant dense<1.5> : {v}\\n"
        f"  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
        f"window = {{pad = [[1, 1], [1, 1]]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({a}, {k}) -> {b}\\n"
        f'  %bn = "stablehlo.batch_norm_inference"(%c, %s, %s, %s, %s) {{epsilon = 1.0e-5 : f32, '
        f"feature_index = 3 : i64}} : ({b}, {v}, {v}, {v}, {v}) -> {b}\\n"
        f"  return %bn : {b}\\n}}\\n"
    )
    with make_ir_context():
        module = ir.Module.parse(text)
        kernel = module.body.operations[0].regions[0].blocks[0].operations[0]
        values = np.random.default_rng(0).standard_normal((3, 3, 1024, 2048)).astype(np.float32)
        kernel.attributes["value"] = ir.DenseElementsAttr.get(values)
        with open(path, "wb") as f:
            module.operation.write_bytecode(f) if fmt == "bytecode" else module.operation.print(file=f, binary=True)
    """
)

# Folds it through the command's main in a fresh process: its peak resident memory
# (VmHWM) above what it had after the imports.
_MEASURE = textwrap.dedent(
    """
    import json, sys
    from stablehlo_bnfold import cli

    def status(field):
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith(field + ":"))

    cli._import_the_pass()
    before = status("VmRSS")
    code = cli.main(sys.argv[1:])
    print(json.dumps({"code": code, "above": status("VmHWM") - before}))
    """
)


@pytest.mark.parametrize("fmt", [Format.TEXT, Format.BYTECODE])
def test_the_estimate_is_an_upper_bound_of_the_memory_a_fold_of_one_large_constant_uses(tmp_path, fmt):
    source = tmp_path / ("model.mlir" if fmt is Format.TEXT else "model.mlirbc")
    subprocess.run([sys.executable, "-c", _BUILD, str(source), fmt.value], check=True, timeout=600)
    args = [str(source), "--stablehlo-fold-batch-norm", "-o", str(tmp_path / "out"), "--no-memory-check"]
    args += [] if fmt is Format.TEXT else ["--emit-bytecode"]
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, *args], capture_output=True, text=True, timeout=600
    )
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    assert measured["code"] == 0, result.stderr
    estimate = memory.estimate_bytes(os.path.getsize(source), fmt)
    assert measured["above"] <= estimate, (
        f"{fmt.value}: used {measured['above'] / 1e6:.0f} MB above the imports, "
        f"{measured['above'] / os.path.getsize(source):.2f}x the input, "
        f"estimated {estimate / 1e6:.0f} MB"
    )
