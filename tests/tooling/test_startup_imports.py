"""Start-up stays cheap: which modules the fast paths import (issue 19, part 4).

Measured with ``python -X importtime`` in a fresh interpreter on this checkout: the list of
modules imported, not the wall clock (which depends on the machine and its load).  A control
run shows that the parser finds a module that *is* imported, so an empty list is evidence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Heavy libraries no fast path may import.
HEAVY = ("scipy.signal", "scipy.stats", "matplotlib", "dask", "sklearn", "statsmodels", "pandas")


def imported(*args: str, exit_status: int = 0) -> set[str]:
    """The modules a fresh ``python -X importtime ARGS`` imports (it must exit with
    ``exit_status``)."""
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
    assert result.returncode == exit_status, result.stderr[-2000:]
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


def test_the_auditor_imports_no_scipy_stats_until_a_joint_test_runs():
    """``scipy.stats`` (about 0.4 s and 45 MB, which every forked worker's start copies the
    page tables of) is imported by the joint exact test when it first runs, not with the
    auditor: an audit at delta 0 never needs it."""
    names = imported("-c", "import dpaudit.audit.monte_carlo, dpaudit.audit.records")
    assert "dpaudit.audit.joint" in names  # the module is there, its scipy.stats is not
    assert not _under(names, "scipy.stats"), _under(names, "scipy.stats")[:3]


@pytest.mark.parametrize("command", ["audit", "learn"])
def test_subcommand_help_imports_no_scipy_nor_sympy(command):
    """``dpaudit audit --help`` took about a second: the command's module imported the whole
    auditor (``scipy.stats``) to read four constants."""
    names = imported("-m", "dpaudit", command, "--help")
    for heavy in ("sympy", "scipy", *HEAVY):
        assert not _under(names, heavy), f"dpaudit {command} --help imports {heavy}"


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
    assert "dpaudit.accountant.core" in names  # the command did run the accountant


#: Commands that answer without importing sympy: plain numbers are exact numbers
#: (``dpaudit.exact_numbers``), the cards' domains are checked as written, the derivation
#: printed, all without sympy (~0.3 s of a ~0.45 s command; issue 19, part 4).
SYMPY_FREE_PATHS = [
    ["account", "Laplace(1)"],
    ["account", "Composed([Laplace(1), Laplace(2)])"],
    # the zCDP, CKS20, RDP, optimal, advanced and PLD candidates on exact numbers, their
    # conversions printed by dpaudit.exact_text (sympy's text, without sympy)
    ["account", "SelfComposed(Laplace(10), 100)", "--delta", "1e-6"],
    ["account", "SelfComposed(RandomizedResponse(0.75), 10)", "--delta", "1e-6"],
    # group privacy and parallel composition; heterogeneous parts composed, with exp(1)
    # (sympy's E) in the advanced-composition text
    ["account", "Group(Parallel([Laplace(1), PureDP(0.3)]), 2)", "--delta", "1e-6"],
    [
        "account",
        "SelfComposed(Composed([Laplace(1), RandomizedResponse(1)]), 10)",
        "--delta",
        "1e-5",
    ],
]


@pytest.mark.parametrize("argv", SYMPY_FREE_PATHS, ids=lambda a: " ".join(a))
def test_account_imports_no_sympy(argv):
    """The command runs the accountant on exact numbers and never imports sympy."""
    names = imported("-m", "dpaudit", *argv)
    assert not _under(names, "sympy"), _under(names, "sympy")[:5]
    assert "dpaudit.accountant.core" in names and "dpaudit.exact_numbers" in names


def test_the_guard_sees_sympy_when_a_symbolic_event_is_accounted():
    """Control: an event with a symbolic parameter needs sympy, and the guard reports it."""
    names = imported("-m", "dpaudit", "explain", "Laplace(b)", "--symbols", "b")
    assert "sympy" in names


#: The fast paths of issue 19, part 4 (``bench/startup.py`` times the same commands).
ACCOUNT_FAST_PATHS = [
    ["account", "Laplace(1)"],
    ["account", "SelfComposed(Laplace(10), 100)", "--delta", "1e-6"],
    ["account", "Gaussian(sigma=3)", "--epsilon", "1"],
    ["explain", "SelfComposed(Laplace(10), 100)", "--delta", "1e-6"],
    # the Gaussian PLD's cut (a normal quantile) and DP-SGD's order choice (log-binomials)
    # imported scipy.special (~0.2 s) until they used the standard library
    ["account", "SelfComposed(Gaussian(1.1), 100)", "--delta", "1e-5"],
    ["account", "SelfComposed(PoissonSampled(Gaussian(1.1), 0.01), 1000)", "--delta", "1e-5"],
]


@pytest.mark.parametrize("argv", ACCOUNT_FAST_PATHS, ids=lambda a: " ".join(a))
def test_account_and_explain_import_no_scipy_at_all(argv):
    """scipy.optimize (the zCDP conversion's order search, ~1.2 s) and scipy.fft (the PLD's
    transforms, ~0.8 s) were the largest costs above sympy; both are gone, and so is scipy."""
    names = imported("-m", "dpaudit", *argv)
    assert not _under(names, "scipy"), (
        f"dpaudit {' '.join(argv)} imports {_under(names, 'scipy')[:5]}"
    )
    assert "dpaudit.accountant" in names  # the command did run the accountant


def test_the_guard_sees_scipy_when_it_is_imported():
    """Control: the same parser reports scipy for a command that imports it."""
    assert _under(imported("-c", "import scipy.fft"), "scipy")


#: Cards whose bound a fast path reads because it *computes* with the formula: none (the zCDP
#: optimal conversion, which did, now calls the function its card's bound is built from).
COMPUTES_WITH_CARD: set[str] = set()

BUILT_AFTER = """
import contextlib, io, json, sys
from dpaudit.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main(sys.argv[1:])
from dpaudit.theorems.base import THEOREMS
built = sorted(k for k, c in THEOREMS.items() if c.bound.built and len(c.bound))
print(json.dumps([status, built]))
"""


def _bounds_built(argv: list[str]) -> tuple[int, list[str]]:
    """Run ``dpaudit ARGV`` in a fresh interpreter: its exit status and the cards whose bound
    it built."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, "-c", BUILT_AFTER, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    status, built = json.loads(out.stdout)
    return status, built


@pytest.mark.parametrize("argv", ACCOUNT_FAST_PATHS[:3], ids=lambda a: " ".join(a))
def test_account_builds_no_theorem_card_bound(argv):
    """The cards' symbolic bounds (about 0.4 s to build, ``rdp_pure``'s Min the largest) are
    built on first read; accounting reads none but the one it computes with."""
    status, built = _bounds_built(argv)
    assert status == 0
    assert set(built) <= COMPUTES_WITH_CARD, f"bounds built: {built}"


def test_explain_builds_the_bounds_it_shows():
    """Control for the guard above: explain prints the cards' formulas, so it builds them."""
    _, built = _bounds_built(ACCOUNT_FAST_PATHS[3])
    assert {"laplace", "advanced_composition", "rdp_laplace"} <= set(built)


def test_pure_dp_account_imports_no_numpy():
    """``account "Laplace(1)"`` (delta 0) builds no PLD and no curve: numpy (~0.15 s) is
    imported only where a PLD, a curve or an order search needs it."""
    names = imported("-m", "dpaudit", "account", "Laplace(1)")
    assert not _under(names, "numpy"), _under(names, "numpy")[:5]
    assert "dpaudit.accountant.tight_builders" in names  # the PLD rules are registered


def test_the_guard_sees_numpy_when_a_pld_is_built():
    """Control: with a delta the PLD is built, and numpy is reported."""
    names = imported(
        "-m", "dpaudit", "account", "SelfComposed(Laplace(10), 100)", "--delta", "1e-6"
    )
    assert "numpy" in names and "dpaudit.pld.fft" in names


#: The Gaussian fast paths that answer without sympy: the analytic Gaussian profile
#: (``gdp_delta``, bisected through a callable by ``bracket_decreasing``), the GDP, zCDP and
#: RDP conversions, subsampling and advanced composition on exact numbers, and the PLD.
GAUSSIAN_SYMPY_FREE_PATHS = [
    ["account", "Gaussian(sigma=3)", "--epsilon", "1"],
    ["account", "Gaussian(sigma=3)", "--epsilon", "1", "--json"],
    ["account", "SelfComposed(Gaussian(1.1), 100)", "--delta", "1e-5"],
    ["account", "SelfComposed(Gaussian(1.1), 100)", "--delta", "1e-5", "--json"],
    ["account", "SelfComposed(PoissonSampled(Gaussian(1.1), 0.01), 1000)", "--delta", "1e-5"],
    [
        "account",
        "SelfComposed(PoissonSampled(Gaussian(1.1), 0.01), 1000)",
        "--delta",
        "1e-5",
        "--json",
    ],
]


@pytest.mark.parametrize("argv", GAUSSIAN_SYMPY_FREE_PATHS, ids=lambda a: " ".join(a))
def test_gaussian_account_imports_no_sympy(argv):
    """Each command runs the accountant on exact numbers and never imports sympy (the control
    ``test_the_guard_sees_sympy_when_a_symbolic_event_is_accounted`` shows the guard works)."""
    names = imported("-m", "dpaudit", *argv)
    assert not _under(names, "sympy"), _under(names, "sympy")[:5]
    assert "dpaudit.accountant.core" in names and "dpaudit.exact_numbers" in names


#: Listing the learners and the report targets, and refusing a bad command line, import no
#: numerics and no learner's or target's code: the learners are registered by import path
#: (mechanisms.estimators.LEARNER_TABLE) and the targets read from the plugins' index
#: (dpaudit.report.listing); they took 2.5-4 s, importing scikit-learn, SciPy and every
#: mechanism.
LISTING_PATHS = [
    (["learn", "--list"], 0),
    (["learn", "--list", "--json"], 0),
    (["report", "--list"], 0),
    (["report", "--list", "--json"], 0),
    (["report", "catalogue/laplace-count"], 2),  # no --out
    (["report", "catalogue/laplace-cont", "--out", "x"], 2),  # misspelled target
    (["report", "--curves", "--out", "x"], 2),
    (["learn", "net-margin", "--train", "a.csv", "--test", "b.csv", "--label", "y",
      "--epsilon", "0"], 2),
    (["learn", "net-margn", "--train", "a.csv", "--test", "b.csv", "--label", "y",
      "--epsilon", "1"], 2),
]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "status"), LISTING_PATHS, ids=[" ".join(a) for a, _ in LISTING_PATHS]
)
def test_listing_and_refusing_import_no_numerics_nor_the_plugins_code(
    argv: list[str], status: int
) -> None:
    names = imported("-m", "dpaudit", *argv, exit_status=status)
    for heavy in ("numpy", "sympy", "mpmath", "scipy", *HEAVY):
        assert not _under(names, heavy), f"dpaudit {' '.join(argv)} imports {heavy}"
    for package in ("mechanisms.estimators.base", "mechanisms.catalogue", "dpaudit.audit.runner"):
        assert package not in names, f"dpaudit {' '.join(argv)} imports {package}"
