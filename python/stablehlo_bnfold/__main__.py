"""`python -m stablehlo_bnfold`: the `stablehlo-bnfold-opt` command."""

import sys

from .entry import console_main

sys.exit(console_main())
