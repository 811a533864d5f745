"""``dpaudit calibrate``: JSON keys, the delta target, plan files and the three clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpaudit.accountant import Accountant
from dpaudit.cli import main
from dpaudit.plans import load_plan

KEYS = ("parameter", "value", "epsilon_upper", "epsilon_lower", "epsilon_target", "delta")


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


def test_json_keys_and_a_certified_value(capsys):
    argv = ["calibrate", "SelfComposed(Laplace(b), 10)", "--epsilon", "1", "--delta", "0"]
    assert main([*argv, "--for", "b", "--json"]) == 0
    d = _json(capsys)
    assert tuple(d)[:6] == KEYS
    assert d["parameter"] == "b" and d["value"] == 10 and d["epsilon_upper"] == 1.0
    assert d["epsilon_target"] == 1.0 and d["delta"] == 0.0 and d["direction"] == "smallest"
    assert d["event"] == "SelfComposed(Laplace(10), 10)" and d["theorem"]


def test_text_names_the_value_the_bounds_and_the_role(capsys):
    argv = ["calibrate", "SelfComposed(PureDP(1/2), k)", "--epsilon", "5", "--delta", "0"]
    assert main([*argv, "--for", "k"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("k = 10  (largest value whose certified epsilon meets epsilon <= 5")
    assert "number of steps: count of SelfComposed(PureDP(0.5), k)" in out


def test_delta_target_keys(capsys):
    argv = ["calibrate", "SelfComposed(Laplace(b), 10)", "--epsilon", "1"]
    assert main([*argv, "--delta-target", "1e-6", "--for", "b", "--json"]) == 0
    d = _json(capsys)
    assert tuple(d)[:6] == (
        "parameter",
        "value",
        "delta_upper",
        "delta_lower",
        "delta_target",
        "epsilon",
    )
    assert d["delta_upper"] <= 1e-6 and d["epsilon"] == 1.0
    # basic composition at delta 0 would need b = 10; a delta of 1e-6 allows less noise
    assert d["value"] < 10


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["SelfComposed(Laplace(2), 10)", "--for", "b"], "does not depend on b"),
        (
            ["SelfComposed(Laplace(b), 10)", "--for", "b", "--low", "1", "--high", "5"],
            "no value of b meets the target",
        ),
        (["Composed([Gaussian(x), Laplace(1/x)])", "--for", "x"], "not known to be monotone"),
        (["Laplace(b)", "--for", "b", "--write", "out.json"], "--write saves a calibrated plan"),
        (["--for", "b"], "give exactly one of an event expression and --plan FILE"),
    ],
)
def test_errors_are_one_line_and_json(argv, message, capsys):
    assert main(["calibrate", *argv, "--epsilon", "1", "--delta", "0", "--json"]) == 2
    captured = capsys.readouterr()
    assert message in json.loads(captured.out)["error"]["message"]
    assert captured.err.count("\n") == 1 and message in captured.err


def test_missing_for_is_a_usage_error(capsys):
    assert main(["calibrate", "Laplace(b)", "--epsilon", "1", "--delta", "0"]) == 2
    assert "--for" in capsys.readouterr().err


def _plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(
        json.dumps(
            {
                "dpaudit_plan": 1,
                "name": "training",
                "delta": "1e-6",
                "event": {
                    "type": "Composed",
                    "events": [
                        {
                            "type": "SelfComposed",
                            "count": 10,
                            "event": {"type": "Laplace", "scale": 5},
                        },
                        {"type": "Laplace", "scale": 100},
                    ],
                },
            }
        ),
        encoding="utf-8",
    )
    return path


def test_plan_field_by_path_and_written_plan(tmp_path, capsys):
    plan = _plan(tmp_path)
    out = tmp_path / "calibrated.json"
    argv = ["calibrate", "--plan", str(plan), "--for", "event.events[0].event.scale"]
    assert main([*argv, "--epsilon", "2", "--json", "--write", str(out)]) == 0
    d = _json(capsys)
    assert d["parameter"] == "scale" and d["written"] == str(out) and d["delta"] <= 1.1e-6
    written = load_plan(out)
    assert written.name == "training"
    g = Accountant().guarantee(written.event, written.delta)
    assert g.epsilon_upper <= 2 and g.epsilon_upper == d["epsilon_upper"]
    assert str(written.event.events[1]) == "Laplace(100)"  # the other fields are kept


def test_plan_field_names_must_be_unique(tmp_path, capsys):
    argv = ["calibrate", "--plan", str(_plan(tmp_path)), "--for", "scale", "--epsilon", "2"]
    assert main([*argv, "--json"]) == 2
    message = _json(capsys)["error"]["message"]
    assert "2 fields named 'scale'" in message and "event.events[1].scale" in message
    argv[4] = "sigma"
    assert main([*argv, "--json"]) == 2
    assert "the plan has no numeric field 'sigma'" in _json(capsys)["error"]["message"]
