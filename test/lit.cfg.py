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
# lit clears the environment: keep PYTHONPATH so a checkout that points it at its own
# python/ tests that code, not the installed copy.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]

_opt = shutil.which("stablehlo-bnfold-opt", path=config.environment["PATH"])
if _opt is None:
    lit_config.fatal("stablehlo-bnfold-opt not found: run `pip install -e .[test]` first")
_filecheck = shutil.which("filecheck", path=config.environment["PATH"])
if _filecheck is None:
    lit_config.fatal("filecheck not found: run `pip install -e .[test]` first")

config.substitutions.append(("stablehlo-bnfold-opt", _opt))
# Strict whitespace is off; --enable-var-scope keeps captures inside their CHECK-LABEL.
config.substitutions.append(("FileCheck", f"{_filecheck} --enable-var-scope"))
