"""``dpaudit account`` with --epsilon (delta bounds), --curve (the profile) and --plan."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


def test_epsilon_gives_certified_delta_bounds(capsys):
    assert main(["account", "Laplace(1)", "--epsilon", "0.5", "--json"]) == 0
    d = _json(capsys)
    truth = 1 - 2.718281828459045**-0.25  # Laplace: 1 - exp((eps - eps0)/2)
    assert d["delta_lower"] <= truth <= d["delta_upper"]
    assert d["epsilon_exact"] == "1/2" and d["theorem"]


def test_epsilon_text_and_pure_dp(capsys):
    assert main(["account", "Laplace(1)", "--epsilon", "1"]) == 0
    out = capsys.readouterr().out
    assert "delta in [0, 0]" in out and "Laplace mechanism" in out


def test_bad_epsilon_is_bad_input(capsys):
    assert main(["account", "Laplace(1)", "--epsilon", "-1", "--json"]) == 2
    message = _json(capsys)["error"]["message"]
    assert "--epsilon must be a finite number in [0, inf), got '-1'" in message


@pytest.mark.slow
def test_curve_json_and_png(tmp_path, capsys):
    out = tmp_path / "curve.json"
    assert main(["account", "SelfComposed(Gaussian(sigma=10), 50)", "--curve", str(out)]) == 0
    data = json.loads(out.read_text())
    assert len(data["points"]) == 19
    assert all(p["epsilon_lower"] <= p["epsilon_upper"] for p in data["points"])
    png = tmp_path / "curve.png"
    assert main(["account", "Gaussian(sigma=2)", "--curve", str(png), "--json"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert main(["account", "Gaussian(sigma=2)", "--curve", str(tmp_path / "c.txt")]) == 2


def test_plan_file(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "dpaudit_plan": 1,
                "name": "release",
                "delta": "1e-6",
                "event": {
                    "type": "SelfComposed",
                    "count": 100,
                    "event": {"type": "Laplace", "scale": 10},
                },
            }
        )
    )
    assert main(["account", "--plan", str(plan), "--json"]) == 0
    d = _json(capsys)
    assert d["event"] == "SelfComposed(Laplace(10), 100)" and d["delta_exact"] == "1/1000000"
    assert main(["account", "--plan", str(plan), "--epsilon", "10", "--json"]) == 0
    assert _json(capsys)["delta_upper"] == 0.0


def test_plan_errors_name_the_field(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    plan.write_text(
        '{"dpaudit_plan": 1, "event": {"type": "Composed", "events": '
        '[{"type": "Laplace", "scale": 1}, {"type": "Gaussian", "sigma": -2}]}}'
    )
    assert main(["account", "--plan", str(plan), "--json"]) == 2
    msg = _json(capsys)["error"]["message"]
    assert "event.events[1].sigma" in msg and "> 0" in msg and "-2" in msg


@pytest.mark.parametrize("argv", [["account"], ["account", "Laplace(1)", "--plan", "x.json"]])
def test_expression_xor_plan(argv, capsys):
    assert main([*argv, "--json"]) == 2
    assert "exactly one of an event expression and --plan" in _json(capsys)["error"]["message"]


def test_subprocess_runs_the_worktree_code(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "dpaudit", "account", "Gaussian(sigma=3)", "--epsilon", "1"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "analytic Gaussian mechanism" in result.stdout
