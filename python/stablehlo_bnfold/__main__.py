"""`python -m stablehlo_bnfold`: the `stablehlo-bnfold-opt` command."""

import sys

from .cli import console_main

sys.exit(console_main())
