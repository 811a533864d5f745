"""Reports of targets audited by one training run (``Target.one_run``; Steinke, Nasr,
Jagielski 2023): validation of the field, the rendered Markdown and HTML, the plot, the
verdict, and the registered one-run targets."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpaudit.report import OneRun, Target, check_up_to_date, collect, generate, load_targets
from dpaudit.report.verdict import down

#: Canaries of the quick targets below (each report collects in about a second).
M = 200


def _randomized_response(epsilon: float):
    """Exactly epsilon-DP for each canary: each inclusion bit reported truthfully with
    probability e^eps / (1 + e^eps) (the mechanism Theorem 3.1 is tight for)."""
    q = 1.0 / (1.0 + math.exp(-epsilon))

    def train(included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        truthful = rng.random(len(included)) < q
        return np.where(truthful, included, ~included) + 1e-3 * rng.random(len(included))

    train.name = f"randomized-response-{epsilon:g}"  # type: ignore[attr-defined]
    return train


def _memorizer(included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Not private at all: its scores reveal every inclusion bit."""
    return included + 1e-3 * rng.random(len(included))


def _target(name: str, train, expect: str = "private") -> Target:
    return Target(
        name=f"test/{name}",
        title=name,
        group="test one-run",
        epsilon=1.0,
        summary="a quick one-run target",
        expect=expect,
        one_run=OneRun(train=lambda: train, m=M),
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict]]:
    out = tmp_path_factory.mktemp("one-run-md")
    targets = [
        _target("rr", _randomized_response(1.0)),
        _target("memorizer", _memorizer, expect="broken"),
    ]
    reports = generate(targets, out, seed=3, progress=False)
    return out, {r["target"]["name"]: r for r in reports}


@pytest.mark.slow
def test_one_run_report_shows_the_audit_numbers_and_the_plot(generated) -> None:
    """The private target's Markdown has its verdict line and every number of the one-run
    audit (m, guesses, correct count, certified bound rounded down with its confidence,
    theory), a theory-curve table with the measured bound at m, and the plot file.

    Statistics: randomized response exactly 1-DP, claimed 1, m = 200 canaries, one run at
    confidence 0.95 (a false alarm has probability <= alpha = 0.05; seed fixed); the same
    audit flags the memorizer (next test), so the check can fail."""
    out, reports = generated
    report = reports["test/rr"]
    a = report["audit"]
    assert a["method"] == "one-run" and a["m"] == M and not a["violation"]
    assert report["verdict"]["kind"] == "consistent" and not report["verdict"]["finding"]
    md = (out / "test--rr.md").read_text(encoding="utf-8")
    kp, km = a["guesses"]
    assert f"> **Verdict: {report['verdict']['line']}**" in md
    assert "one-run audit (m = 200 canaries) lower" in report["verdict"]["line"]
    assert f"| canaries m | {M:,} ({a['included']:,} included" in md
    assert f"{kp:,} highest scores guessed included, {km:,} lowest guessed excluded" in md
    assert f"| correct guesses | {a['correct']:,} of {kp + km:,}" in md
    assert f"epsilon >= {down(a['epsilon_lower'])} (rounded down, confidence 95%)" in md
    assert f"| theory (the paper) | {down(a['theory'])}:" in md
    assert f"| {M:,} | {down(a['theory'])} | {down(a['epsilon_lower'])} |" in md
    assert len(a["candidates"]) == a["tests"] and len(a["theory_curve"]) == 9
    assert (out / "plots" / "test--rr-one-run.png").read_bytes().startswith(b"\x89PNG")
    assert "![one-run audit and the theory curve, rr](plots/test--rr-one-run.png)" in md
    # the stored numbers are rounded the safe way, and the measured point lies on the curve
    on_curve = {p["correct"]: p["epsilon_lower"] for p in a["count_curve"]}
    assert on_curve[a["correct"]] == a["epsilon_lower"] <= 1.0
    assert a["theory"] == next(p["theory"] for p in a["theory_curve"] if p["m"] == M)
    stored = json.loads((out / "test--rr.json").read_text(encoding="utf-8"))
    assert stored["audit"]["epsilon_lower"] == a["epsilon_lower"]
    assert stored["target"]["one_run"] == {"m": M, "guesses": None}


def test_broken_one_run_target_is_flagged_and_caught(generated) -> None:
    """A trainer whose scores reveal every inclusion bit, claiming epsilon 1, is flagged:
    VIOLATION (m = 200, confidence 0.95; every guess is correct, which certifies far above
    1), as the broken target expects (no finding); the index says so."""
    out, reports = generated
    report = reports["test/memorizer"]
    assert report["audit"]["violation"] and report["audit"]["epsilon_lower"] > 2.0
    assert report["verdict"]["kind"] == "violation" and not report["verdict"]["finding"]
    md = (out / "test--memorizer.md").read_text(encoding="utf-8")
    assert "> **Verdict: VIOLATION: the code has epsilon >= " in md
    assert "expected: broken (caught)" in md
    assert "does not have the claimed guarantee" in md
    assert "No unexpected finding" in (out / "index.md").read_text(encoding="utf-8")


def test_one_run_reports_are_up_to_date_checkable(generated) -> None:
    """The fast check recomputes a one-run target's fingerprint (its m and guesses in it)."""
    out, _ = generated
    rr = _target("rr", _randomized_response(1.0))
    assert check_up_to_date(out, [rr, _target("memorizer", _memorizer, "broken")]) == []
    more = Target(
        name="test/rr",
        title="rr",
        group="test one-run",
        epsilon=1.0,
        summary="a quick one-run target",
        one_run=OneRun(train=lambda: _randomized_response(1.0), m=M + 1),
    )
    assert any("inputs changed" in p for p in check_up_to_date(out, [more]))


def test_one_run_html_report_embeds_its_plots(tmp_path: Path) -> None:
    generate([_target("mem", _memorizer, "broken")], tmp_path, fmt="html", progress=False)
    page = (tmp_path / "test--mem.html").read_text(encoding="utf-8")
    assert 'class="verdict violation"' in page
    assert "<td>certified lower bound</td>" in page
    assert 'alt="one-run audit and the theory curve, mem"' in page
    assert page.count('src="data:image/png;base64,') == 1  # no plan: no privacy curve


def test_a_failing_trainer_is_an_audit_error_not_a_crash() -> None:
    def wrong(included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.zeros(3)

    report = collect(_target("wrong", wrong), seed=0)
    assert report["audit"]["error"].startswith("ValueError: train must return m = 200 scores")
    assert report["verdict"]["kind"] == "not audited"


def _train() -> Callable[..., Any]:
    return _memorizer


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"train": 3, "m": 10}, r"OneRun: train must be a zero-argument callable .* got 3"),
        ({"train": _train, "m": 0}, r"OneRun: m \(canaries\) must be an integer >= 1, got 0"),
        ({"train": _train, "m": True}, r"m \(canaries\) must be an integer >= 1, got True"),
        ({"train": _train, "m": 10.0}, r"m \(canaries\) must be an integer >= 1, got 10.0"),
        (
            {"train": _train, "m": 10, "guesses": ((6, 5),)},
            r"guesses must be None or a non-empty tuple of \(k_plus, k_minus\) integer pairs "
            r">= 0 with 1 <= k_plus \+ k_minus <= m = 10, got \(\(6, 5\),\)",
        ),
        ({"train": _train, "m": 10, "guesses": ()}, r"non-empty tuple .* got \(\)"),
        ({"train": _train, "m": 10, "guesses": ((-1, 2),)}, r"pairs >= 0 .* got \(\(-1, 2\),\)"),
        ({"train": _train, "m": 10, "guesses": [(1, 1)]}, r"got \[\(1, 1\)\]"),
    ],
)
def test_one_run_field_is_validated(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        OneRun(**kwargs)


def test_target_with_one_run_is_validated() -> None:
    spec = OneRun(train=_train, m=10, guesses=((5, 5), (3, 0)))
    assert Target(name="a/b", title="x", group="g", epsilon=1.0, one_run=spec).one_run is spec
    with pytest.raises(ValueError, match=r"Target a/b: one_run must be None or a OneRun"):
        Target(name="a/b", title="x", group="g", epsilon=1.0, one_run=_train)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"a target audited by one run \(one_run\) takes no mechanism, pairs"
    ):
        Target(
            name="a/b",
            title="x",
            group="g",
            epsilon=1.0,
            one_run=spec,
            mechanism=lambda: None,
            pairs=lambda: [],
        )
    with pytest.raises(ValueError, match=r"takes no not_audited: got not_audited='why'"):
        Target(name="a/b", title="x", group="g", epsilon=1.0, one_run=spec, not_audited="why")


def test_registered_one_run_targets() -> None:
    """The plugin registers the white-box and black-box trainers (private) and the broken
    trainer (group broken), all audited by one run, the white-box ones with their plan."""
    from dpaudit.report import TARGETS

    load_targets()
    one_run = {n: t for n, t in TARGETS.items() if t.one_run is not None}
    assert {n: (t.group, t.expect) for n, t in one_run.items()} == {
        "one-run/noisy-gd-gradient-canaries": ("one-run training", "private"),
        "one-run/noisy-sgd-margin-input-canaries": ("one-run training", "private"),
        "broken/noisy-gd-too-little-noise-one-run": ("broken", "broken"),
    }
    honest = one_run["one-run/noisy-gd-gradient-canaries"]
    broken = one_run["broken/noisy-gd-too-little-noise-one-run"]
    assert honest.plan == broken.plan and honest.epsilon == broken.epsilon == 1.9931
    assert all(t.one_run.m == 1000 for t in one_run.values())  # type: ignore[union-attr]


@pytest.mark.slow
def test_registered_one_run_targets_render_with_the_expected_verdicts(tmp_path: Path) -> None:
    """The three registered one-run targets at the committed reports' seed: the private
    ones consistent, the broken one a VIOLATION (caught); no unexpected finding."""
    from dpaudit.report import REPORTS_SEED, resolve_targets

    load_targets()
    targets = resolve_targets(["one-run", "broken/noisy-gd-too-little-noise-one-run"])
    reports = {
        r["target"]["name"]: r
        for r in generate(targets, tmp_path, seed=REPORTS_SEED, progress=False)
    }
    kinds = {n: r["verdict"]["kind"] for n, r in reports.items()}
    assert kinds == {
        "one-run/noisy-gd-gradient-canaries": "consistent",
        "one-run/noisy-sgd-margin-input-canaries": "consistent",
        "broken/noisy-gd-too-little-noise-one-run": "violation",
    }
    assert not any(r["verdict"]["finding"] for r in reports.values())
    md = (tmp_path / "broken--noisy-gd-too-little-noise-one-run.md").read_text(encoding="utf-8")
    assert "VIOLATION" in md and "expected: broken (caught)" in md
    for name in reports:
        assert (tmp_path / "plots" / f"{name.replace('/', '--')}-one-run.png").exists()
