"""Start-up stays cheap: which modules the fast paths import (issue 19, part 4).

Measured with ``python -X importtime`` in a fresh interpreter on this checkout: the list of
modules imported, not the wall clock (which depends on the machine and its load).  A control
run shows that the parser finds a module that *is* imported, so an empty list is evidence.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Heavy libraries no fast path may import.
HEAVY = ("scipy.signal", "scipy.stats", "matplotlib", "dask", "sklearn", "statsmodels", "pandas")


def imported(*args: str) -> set[str]:
    """The modules a fresh ``python -X importtime ARGS`` imports."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    names = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names


def _under(names: set[str], package: str) -> list[str]:
    return sorted(n for n in names if n == package or n.startswith(package + "."))


def test_the_parser_sees_imports():
    names = imported("-c", "import json")
    assert "json" in names and "json.decoder" in names


def test_import_dpaudit_is_bare():
    names = imported("-c", "import dpaudit")
    for heavy in ("numpy", "sympy", "mpmath", "scipy", *HEAVY):
        assert not _under(names, heavy), heavy


def test_help_imports_no_numerics():
    names = imported("-m", "dpaudit", "--help")
    for heavy in ("numpy", "sympy", "mpmath", "scipy", *HEAVY):
        assert not _under(names, heavy), f"dpaudit --help imports {_under(names, heavy)[:3]}"


@pytest.mark.parametrize(
    "argv",
    [
        ["account", "Laplace(1)"],
        ["account", "SelfComposed(Laplace(10), 100)", "--delta", "1e-6"],
    ],
)
def test_account_imports_no_scipy_signal_nor_plotting(argv):
    names = imported("-m", "dpaudit", *argv)
    for heavy in HEAVY:
        assert not _under(names, heavy), f"dpaudit {' '.join(argv)} imports {heavy}"
    assert "sympy" in names  # the accountant is exact arithmetic: sympy is its one heavy need
