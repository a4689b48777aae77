"""Writes docs/passes.md: `python3 -m stablehlo_bnfold.docs > docs/passes.md`."""

from .passes import documentation

if __name__ == "__main__":
    print(documentation(), end="")
