"""Text through the API is as safe as bytes: MLIR's parser runs in a child, where a crash
cannot reach the caller, and a file name given as text is refused with the call to use."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap

import pytest

import stablehlo_bnfold
from stablehlo_bnfold import FoldError
from test_cli import EXAMPLE


def nested_case(depth: int) -> str:
    """A module whose result comes through `depth` nested stablehlo.case regions."""
    text = "stablehlo.return %x : tensor<f32>"
    for _ in range(depth):
        text = (
            f'%r = "stablehlo.case"(%i) ({{\n{text}\n}}) : (tensor<i32>) -> tensor<f32>\n'
            "stablehlo.return %r : tensor<f32>"
        )
    body, _, last = text.rpartition("stablehlo.return %r")
    return (
        "func.func @main(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {\n"
        f"{body}return %r{last}\n}}\n"
    )


def _run_on_text_nested_3000_deep(call: str) -> str:
    """Print `call` (Python, with `deep` the 3,000-deep module) in a fresh process, so that
    a regression fails one test only; what it printed. The process must live."""
    script = textwrap.dedent(
        """
        import sys
        sys.path[:0] = [sys.argv[1]]
        from test_untrusted_text import nested_case
        import stablehlo_bnfold
        deep = nested_case(3000)
        """
    ) + call
    run = subprocess.run(
        [sys.executable, "-c", script, str(pathlib.Path(__file__).parent)],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, f"the caller died: {run.returncode}, {run.stderr[-2000:]}"
    return run.stdout.strip()


def test_text_nested_3000_deep_is_a_fold_error_not_the_end_of_the_caller():
    # In this process MLIR's recursive parser overflows the stack (SIGSEGV) at about
    # 2,500 levels.
    printed = _run_on_text_nested_3000_deep(
        "try:\n    stablehlo_bnfold.fold_batch_norm(deep)\n"
        "except stablehlo_bnfold.FoldError as error:\n    print('FoldError:', error)"
    )
    assert printed == "FoldError: <input>: invalid input: the MLIR reader crashed on it (SIGSEGV)"


def test_verify_of_text_nested_3000_deep_cannot_verify_it_and_the_caller_lives():
    # verify(str, str) parsed the text in the caller's process, where fold_batch_norm
    # (which verify=True calls first) reads it in a child.
    printed = _run_on_text_nested_3000_deep("print(stablehlo_bnfold.verify(deep, deep))")
    assert printed == (
        "cannot verify here: <input>: invalid input: the MLIR reader crashed on it (SIGSEGV)"
    )


def test_text_nested_a_hundred_deep_still_folds_through_the_child():
    assert stablehlo_bnfold.fold_batch_norm(nested_case(100)).count("stablehlo.case") == 100


def test_trusted_text_is_folded_in_this_process_as_before():
    folded = stablehlo_bnfold.fold_batch_norm(EXAMPLE.read_text(), trusted=True)
    assert folded == stablehlo_bnfold.fold_batch_norm(EXAMPLE.read_text())
    assert "batch_norm_inference" not in folded


@pytest.mark.parametrize(
    "name, what",
    [
        (str(EXAMPLE), "is a file name"),
        ("model.mlir", "looks like a file name (and there is no such file)"),
        ("models/resnet.stablehlo", "looks like a file name (and there is no such file)"),
    ],
)
def test_a_file_name_given_as_text_is_refused_with_the_call_to_use(name, what):
    with pytest.raises(FoldError) as raised:
        stablehlo_bnfold.fold_batch_norm(name)
    assert str(raised.value) == (
        f"fold_batch_norm: {name!r} {what}, not MLIR text: pass a path, "
        f"fold_batch_norm(pathlib.Path({name!r}))"
    )


def test_the_call_the_message_names_folds_the_file():
    folded = stablehlo_bnfold.fold_batch_norm(pathlib.Path(EXAMPLE))
    assert b"batch_norm_inference" not in folded and b"stablehlo.convolution" in folded
