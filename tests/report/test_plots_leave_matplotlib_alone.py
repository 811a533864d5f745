"""Reports draw their plots on matplotlib Figures outside pyplot: importing dpaudit's report
and learning-curve modules, or drawing a report's plots, leaves a user's matplotlib as it was
(its backend, say a notebook's, and pyplot's figure list).  Both modules used to call
``matplotlib.use("Agg")`` when imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import json, sys, tempfile
from pathlib import Path
import matplotlib
matplotlib.use("svg")
import matplotlib.pyplot as plt
import dpaudit.learning_curves, dpaudit.report
from dpaudit.report.plots import growth_plot, privacy_curve_plot
report = json.loads(Path(sys.argv[1]).read_text())
with tempfile.TemporaryDirectory() as tmp:
    assert privacy_curve_plot(report, Path(tmp) / "curve.png")
    assert growth_plot(report, Path(tmp) / "growth.png")
    assert (Path(tmp) / "curve.png").read_bytes()[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
print(matplotlib.get_backend(), plt.get_fignums())
"""


@pytest.mark.slow
def test_importing_and_plotting_keep_the_users_backend_and_figures() -> None:
    report = ROOT / "reports" / "000--theorem-5.json"
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(report)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["svg", "[]"]


def test_importing_the_report_package_does_not_import_matplotlib() -> None:
    code = "import sys, dpaudit.report, dpaudit.learning_curves; print('matplotlib' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"
