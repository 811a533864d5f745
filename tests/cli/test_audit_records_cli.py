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


    def _validated(data):
        if not np.isfinite(data).all():
            raise ValueError("input contains NaN or infinity")
        return _sum(data)


    def validated_sum(data, rng):  # refuses NaN and infinities; correct on everything else
        return float(_validated(data) + rng.laplace(0.0, 11.0))


    validated_sum.batch = lambda data, n, rng: _validated(data) + rng.laplace(0.0, 11.0, n)


    class SizeScaled:  # noise 2 / n on a sum clamped to [0, 1]: true epsilon n / 2
        arithmetic = "real"

        def epsilon(self, data):  # the claim, a function of the dataset (its size)
            return len(data) / 2

        def batch(self, data, n, rng):
            total = np.clip(np.nan_to_num(data[:, 0]), 0, 1).sum()
            return total + rng.laplace(0.0, 2.0 / len(data), n)

        def __call__(self, data, rng):
            return float(self.batch(data, 1, rng)[0])


    class HalfClaimed(SizeScaled):
        def epsilon(self, data):
            return len(data) / 4
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


@pytest.mark.slow
def test_broken_function_in_the_current_directory_is_flagged(workdir: Path) -> None:
    done = dpaudit(workdir, "audit", "usercode:too_little_noise", *AUDIT, "--json")
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["violation"] and result["epsilon_lower"] > 5
    assert result["relation"] == "replace-one" and result["candidates_searched"] > 10
    d0, d1 = result["pair"]
    assert len(d0) == len(d1) >= 1 and all(len(row) == 2 for row in d0 + d1)


@pytest.mark.slow
def test_correct_function_passes_and_add_remove_is_searched(workdir: Path) -> None:
    # Correct in real arithmetic on finite inputs (np.clip passes NaN: edge values off); in
    # doubles, textbook Laplace is not (docs/floating-point.md).
    real = ("--arithmetic", "real", "--no-edge-values")
    done = dpaudit(workdir, "audit", "usercode:noisy_sum", *AUDIT, *real)
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
        *real,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["relation"] == "add-remove"
    assert sorted(len(d) for d in result["pair"]) in ([0, 1], [1, 2])


@pytest.mark.slow
def test_edge_values_are_searched_by_default_and_refusals_listed(workdir: Path) -> None:
    """np.clip passes NaN: the default search finds a NaN record (exit 1, the edge value in
    the JSON); a function refusing NaN is audited to a verdict, its refusals listed (exit 0);
    --on-error raise aborts naming the datasets (exit 2)."""
    real = ("--arithmetic", "real", "--json")
    done = dpaudit(workdir, "audit", "usercode:noisy_sum", *AUDIT, *real)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert any(e["value"] == "NaN" for e in result["pair_edge_values"])
    assert "nan" in json.dumps(result["pair"])
    done = dpaudit(workdir, "audit", "usercode:validated_sum", *AUDIT, *real)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["refused_count"] > 0 and result["refused"][0]["exception"] == "ValueError"
    done = dpaudit(workdir, "audit", "usercode:validated_sum", *AUDIT, "--on-error", "raise")
    assert done.returncode == 2
    assert "ValueError: input contains NaN or infinity" in done.stderr
    assert "neighbouring datasets d0=" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("target", "code"), [("SizeScaled", 0), ("HalfClaimed", 1)])
def test_a_target_whose_epsilon_is_a_function_of_the_dataset_is_read_per_pair(
    workdir: Path, target: str, code: int
) -> None:
    """OBJECT.epsilon(data) = n / 2 is the truth (exit 0); n / 4 under-claims (exit 1)."""
    done = dpaudit(
        workdir,
        "audit",
        f"usercode:{target}",
        "--records",
        "(0,1)",
        "--sizes",
        "1,8",
        "--samples",
        "20000",
        "--seed",
        "0",
        "--json",
    )
    assert done.returncode == code, done.stderr
    result = json.loads(done.stdout)
    assert result["epsilon_claimed"] == len(result["pair"][0]) / (2 if code == 0 else 4)
    assert "epsilon(dataset) =" in result["claim_description"]
    if code == 0:  # a given pair: one claim needed, and said so
        done = dpaudit(workdir, "audit", f"usercode:{target}", "--d0", "[[1]]", "--d1", "[[0]]")
        assert done.returncode == 2
        assert "--epsilon must be given: OBJECT.epsilon is a function of the dataset" in (
            done.stderr
        )


@pytest.mark.slow
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
        (
            "usercode:noisy_sum",
            ("--d0", "[[1]]", "--d1", "[[0]]", "--no-edge-values"),
            "--no-edge-values must be combined with --records",
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
