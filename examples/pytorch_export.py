"""Fold the batch norms of a small PyTorch model exported to StableHLO by torch-mlir or torch_xla.

    pip install torch torch-mlir      # or: pip install torch torch_xla
    python3 examples/pytorch_export.py

Without torch and one of the two exporters it says so and exits 0. torch-mlir's
`fx.export_and_import(model, x, output_type="stablehlo")` is how this repository's
torchvision test networks were made (test/testdata/torchvision/generate.py); the torch_xla
path (`exported_program_to_stablehlo`, weights as arguments) follows torch_xla's
documentation and is not run by this repository's tests.

The exported text is folded with `fold_batch_norm` (text in, text out), the report
printed, and the original and folded modules run through XLA on the CPU on the same
seeded inputs with `stablehlo_bnfold.verify`.
"""

import importlib.util
import sys

import stablehlo_bnfold


def missing() -> str | None:
    """What is missing to run this example, or None."""
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed"
    if not any(importlib.util.find_spec(name) for name in ("torch_mlir", "torch_xla")):
        return "neither torch-mlir nor torch_xla is installed"
    return None


def small_model():
    """conv -> batch norm -> relu, twice, then global average pool and a linear layer, in
    eval mode with seeded weights and batch statistics that look trained."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10),
    ).eval()
    with torch.no_grad():
        for module in model:
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.normal_(0, 0.2)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0, 0.2)
    return model


def export(model, x) -> str:
    """StableHLO text of `model` at input `x`, by torch-mlir if installed, else torch_xla."""
    if importlib.util.find_spec("torch_mlir") is not None:
        from torch_mlir import fx

        return str(fx.export_and_import(model, x, output_type="stablehlo"))
    import torch
    from torch_xla.stablehlo import exported_program_to_stablehlo

    program = exported_program_to_stablehlo(torch.export.export(model, (x,)))
    return program.get_stablehlo_text("forward")


def main() -> int:
    reason = missing()
    if reason is not None:
        print(f"skipped: {reason} (pip install torch torch-mlir, or torch torch_xla)")
        return 0
    import torch

    text = export(small_model(), torch.zeros(1, 3, 16, 16))
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    print(report.to_text())
    verification = stablehlo_bnfold.verify(text, folded)
    print("\n".join(verification.lines()))
    return 0 if verification.ok else 1


if __name__ == "__main__":
    sys.exit(main())
