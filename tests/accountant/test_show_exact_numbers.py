"""statements.show on exact numbers built without sympy: the closed form where
dpaudit.exact_text prints it as sympy does, the rounded value (as for a large expression)
where only sympy could print it, so that showing never imports sympy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from dpaudit.accountant.statements import show, upper_float
from dpaudit.exact_numbers import rational
from dpaudit.numeric import functions as fn
from dpaudit.theorems import amplification, zcdp

closed = zcdp.zcdp_to_approx(rational(1) / 2, rational(1) / 100000)  # exact_text prints it
amplified, _ = amplification.poisson_amplification(1, 0, rational(1) / 10)  # log(E/10 + 9/10)
declined = amplified + 1  # a log of a sum beside another term: exact_text declines it
print(show(closed))
print(show(amplified))
print(show(declined))
print(f"~{upper_float(declined):.6g}")
print("sympy" in sys.modules)
"""


def test_show_prints_closed_forms_or_rounded_values_without_sympy():
    """In a fresh interpreter: the zCDP epsilon 1/2 + 2 sqrt(log(10^5)/2) and the amplified
    epsilon log(1 + (e - 1)/10) are shown as sympy prints them, a form the native printer
    declines (1 + that log) by its value rounded up, and sympy is never imported (broken
    input: a show() that printed the last through sympy fails the last assertion)."""
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    closed, amplified, declined, rounded, imported = out.stdout.split("\n")[:5]
    assert closed == "1/2 + sqrt(2)*sqrt(log(100000)) ~ 5.29853"
    assert amplified == "log(E/10 + 9/10) ~ 0.158565"
    assert declined == rounded == "~1.15857"
    assert imported == "False"
