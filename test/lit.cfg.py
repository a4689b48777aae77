"""lit configuration: finds stablehlo-bnfold-opt and FileCheck, sets FileCheck's options once."""

import os
import shutil
import sys

import lit.formats

config.name = "stablehlo-bnfold"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["testdata", "python", "lit.cfg.py"]
config.environment["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
# lit passes no PYTHONPATH of its own: without this, the tool would import whatever package
# is installed, which need not be this checkout's. The caller's PYTHONPATH comes first (the
# package pytest imports, a mutant under test/mutation), then this checkout's python/.
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in (os.environ.get("PYTHONPATH"),
                os.path.join(os.path.dirname(config.test_source_root), "python")) if p
)

_opt = shutil.which("stablehlo-bnfold-opt", path=config.environment["PATH"])
if _opt is None:
    lit_config.fatal("stablehlo-bnfold-opt not found: run `pip install -e .[test]` first")
_filecheck = shutil.which("filecheck", path=config.environment["PATH"])
if _filecheck is None:
    lit_config.fatal("filecheck not found: run `pip install -e .[test]` first")

config.substitutions.append(("stablehlo-bnfold-opt", _opt))
# Strict whitespace is off; --enable-var-scope keeps captures inside their CHECK-LABEL.
config.substitutions.append(("FileCheck", f"{_filecheck} --enable-var-scope"))
