"""``dpaudit audit MODULE:FN --records DOMAIN``, and targets loaded from the current directory.

The commands run as the installed ``dpaudit`` console script does: in a subprocess whose
import path does *not* start with the current directory (``python -m`` and ``python -c``
would put it there themselves), in a temporary directory holding the user's module. Audits
certify at confidence 0.95 (alpha = 0.05) with 20,000 samples per dataset, seed 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Run ``dpaudit.cli.main`` like the console script: no current directory on sys.path.
SCRIPT = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "from dpaudit.cli import main; sys.exit(main(sys.argv[1:]))"
)

MODULE = textwrap.dedent(
    """
    import numpy as np


    def _sum(data):
        return np.clip(data[:, 0], -1.0, 10.0).sum()


    def noisy_sum(data, rng):  # correct under replace-one: sensitivity 11
        return float(_sum(data) + rng.laplace(0.0, 11.0))


    noisy_sum.batch = lambda data, n, rng: _sum(data) + rng.laplace(0.0, 11.0, n)


    def too_little_noise(data, rng):  # ten times too little noise
        return float(_sum(data) + rng.laplace(0.0, 1.1))


    too_little_noise.batch = lambda data, n, rng: _sum(data) + rng.laplace(0.0, 1.1, n)


    class Count:
        epsilon = 1.0
        pairs = [([1, 1, 1], [1, 1])]

        def __call__(self, data, rng):
            return len(data) + rng.laplace(0.0, 1.0)


    COUNT = Count()
    """
)


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "usercode.py").write_text(MODULE)
    return tmp_path


def dpaudit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


AUDIT = ("--records", "(-1,10),{0,1}", "--epsilon", "1", "--samples", "20000", "--seed", "0")


def test_broken_function_in_the_current_directory_is_flagged(workdir: Path) -> None:
    done = dpaudit(workdir, "audit", "usercode:too_little_noise", *AUDIT, "--json")
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["violation"] and result["epsilon_lower"] > 5
    assert result["relation"] == "replace-one" and result["candidates_searched"] > 10
    d0, d1 = result["pair"]
    assert len(d0) == len(d1) >= 1 and all(len(row) == 2 for row in d0 + d1)


def test_correct_function_passes_and_add_remove_is_searched(workdir: Path) -> None:
    # Correct in real arithmetic; in doubles, textbook Laplace is not (docs/floating-point.md).
    done = dpaudit(workdir, "audit", "usercode:noisy_sum", *AUDIT, "--arithmetic", "real")
    assert done.returncode == 0, done.stderr
    assert "no violation found" in done.stdout and "best of" in done.stdout
    # Under add-remove the sensitivity is 10 < 11: still correct; datasets of 0..2 records.
    done = dpaudit(
        workdir,
        "audit",
        "usercode:noisy_sum",
        *AUDIT,
        "--relation",
        "add-remove",
        "--sizes",
        "0,2",
        "--json",
        "--arithmetic",
        "real",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["relation"] == "add-remove"
    assert sorted(len(d) for d in result["pair"]) in ([0, 1], [1, 2])


@pytest.mark.parametrize(
    ("target", "extra", "message"),
    [
        (
            "nosuchmodule:fn",
            (),
            "cannot import module 'nosuchmodule': no module named 'nosuchmodule' in the "
            "current directory",
        ),
        ("usercode:nope", (), "module 'usercode' ("),
        (
            "usercode:noisy_sum",
            ("--records", "(10,-1)"),
            "domain[0] must be a (low, high) tuple with low <= high",
        ),
        (
            "usercode:noisy_sum",
            ("--records", "(0,1)", "--sizes", "x"),
            "--sizes must be two integers",
        ),
        (
            "usercode:noisy_sum",
            (
                "--records",
                "(0,1",
            ),
            "--records must be columns like",
        ),
        (
            "usercode:noisy_sum",
            ("--records", "(0,1)", "--d0", "1"),
            "--records must not be combined with --d0",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(
    workdir: Path, target: str, extra: tuple[str, ...], message: str
) -> None:
    done = dpaudit(workdir, "audit", target, "--epsilon", "1", *extra)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert message in done.stderr
    if target == "usercode:nope":
        assert "has no 'nope'" in done.stderr and str(workdir / "usercode.py") in done.stderr


@pytest.mark.slow  # 7 s: a whole report in a subprocess
def test_report_loads_an_object_from_the_current_directory(workdir: Path) -> None:
    done = dpaudit(workdir, "report", "usercode:COUNT", "--out", "out", "--no-audit")
    assert done.returncode == 0, done.stderr
    assert (workdir / "out" / "index.md").exists()
    done = dpaudit(workdir, "report", "usercode:MISSING", "--out", "out", "--no-audit")
    assert done.returncode == 2
    assert "module 'usercode'" in done.stderr and "has no 'MISSING'" in done.stderr
