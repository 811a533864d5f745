"""Writing reports, the index, the manifest and its up-to-date check, and the CLI."""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import pytest

from dpaudit.cli import main
from dpaudit.report import Target, check_up_to_date, generate


@pytest.mark.slow
def test_generate_markdown_with_index_plots_and_manifest(
    tmp_path: Path, laplace_target: Target, broken_target: Target
) -> None:
    reports = generate([laplace_target, broken_target], tmp_path, seed=5, progress=False)
    assert [r["verdict"]["kind"] for r in reports] == ["consistent", "violation"]
    index = (tmp_path / "index.md").read_text()
    assert "[test/laplace](test--laplace.md)" in index
    assert "VIOLATION" in index and "No unexpected finding" in index
    page = (tmp_path / "test--broken.md").read_text()
    for heading in (
        "## Claim",
        "## Declared plan",
        "## Accountant's guarantee",
        "## Verification of the claim",
        "## Audit of the code",
        "## Plots",
    ):
        assert heading in page
    assert "(rounded down, confidence 95%)" in page and "upper bound, rounded up" in page
    assert (tmp_path / "plots" / "test--broken-curve.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "plots" / "test--broken-growth.png").exists()
    assert check_up_to_date(tmp_path, [laplace_target, broken_target]) == []


@pytest.mark.slow
def test_generation_is_byte_identical_under_the_seed(tmp_path: Path, rr_target: Target) -> None:
    generate([rr_target], tmp_path / "a", seed=3, progress=False, command="x")
    generate([rr_target], tmp_path / "b", seed=3, progress=False, command="x")
    for f in sorted((tmp_path / "a").rglob("*")):
        if f.is_file():
            assert (
                f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes()
            ), f.name


def test_check_finds_edits_stale_inputs_and_missing_reports(
    tmp_path: Path, rr_target: Target, laplace_target: Target
) -> None:
    generate([rr_target], tmp_path, seed=3, progress=False, audit=False)
    assert check_up_to_date(tmp_path, [rr_target]) == []
    page = tmp_path / "test--rr.md"
    page.write_text(page.read_text() + "\nedited\n")
    assert check_up_to_date(tmp_path, [rr_target]) == [
        "test/rr: test--rr.md was edited after generation"
    ]
    generate([rr_target], tmp_path, seed=3, progress=False, audit=False)
    import dataclasses

    changed = dataclasses.replace(rr_target, samples=rr_target.samples + 1)
    assert check_up_to_date(tmp_path, [changed]) == [
        "test/rr: its target changed",
        "test/rr: its inputs changed (code audited, plan, claim, seed or samples)",
    ]
    assert "test/laplace: no report" in check_up_to_date(tmp_path, [rr_target, laplace_target])
    assert check_up_to_date(tmp_path / "nowhere")[0].endswith(
        "regenerate with `dpaudit report all --out reports --seed 2024`"
    )


@pytest.mark.slow
def test_check_with_curves_recomputes_the_privacy_curve(
    tmp_path: Path, rr_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``curves=True`` recomputes the accountant's privacy curve: an accountant change that
    moves one point (simulated: every epsilon upper bound 1% higher) is reported, while the
    default check, which does not recompute curves, cannot see it."""
    import importlib

    collect = importlib.import_module("dpaudit.report.contents")
    generate([rr_target], tmp_path, seed=3, progress=False, audit=False)
    assert check_up_to_date(tmp_path, [rr_target], curves=True) == []
    real = collect._curve

    def moved(plan):  # type: ignore[no-untyped-def]
        c = real(plan)
        for p in c["points"]:
            p["epsilon_upper"] *= 1.01
        return c

    monkeypatch.setattr(collect, "_curve", moved)
    assert check_up_to_date(tmp_path, [rr_target]) == []
    assert check_up_to_date(tmp_path, [rr_target], curves=True) == [
        "test/rr: its privacy curve changed"
    ]


def test_curves_without_check_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "catalogue/laplace-count", "--curves"]) == 2
    assert "--curves applies to --check DIR only" in capsys.readouterr().err


def test_check_finds_an_empty_file_even_when_the_manifest_agrees(
    tmp_path: Path, rr_target: Target
) -> None:
    """A regeneration cut off while writing once left an empty plot whose (empty) hash the
    manifest recorded: the check must still refuse it."""
    generate([rr_target], tmp_path, seed=3, progress=False, audit=False)
    manifest_path = tmp_path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    rel = next(r for r in manifest["targets"]["test/rr"]["files"] if r.endswith(".png"))
    (tmp_path / rel).write_bytes(b"")
    manifest["targets"]["test/rr"]["files"][rel] = hashlib.sha256(b"").hexdigest()
    manifest_path.write_text(json.dumps(manifest))
    assert check_up_to_date(tmp_path, [rr_target]) == [f"test/rr: {rel} is empty"]


def test_html_report_is_standalone_and_escaped(tmp_path: Path, broken_target: Target) -> None:
    generate([broken_target], tmp_path, fmt="html", seed=1, progress=False)
    page = (tmp_path / "test--broken.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert 'class="verdict violation"' in page
    assert '<img src="data:image/png;base64,' in page  # embedded: test_html_standalone.py
    assert '<a href="test--broken.html">' in (tmp_path / "index.html").read_text()


def _write_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_mechs.py").write_text(
        textwrap.dedent("""
        import numpy as np
        from dpaudit.audit import NeighbouringPair

        class NoisyCount:
            '''A count with Laplace noise; the claim is given as epsilon.'''
            arithmetic = "real"  # a real-arithmetic claim (float bit patterns not searched)
            def __init__(self, scale, epsilon):
                self.scale, self.epsilon, self.delta = scale, epsilon, 0.0
                self.name, self.samples = "noisy-count", 20_000
                self.pairs = (NeighbouringPair(5.0, 4.0, "remove one record"),)
            def __call__(self, d, rng):
                return float(d + rng.laplace(0.0, self.scale))
            def batch(self, d, n, rng):
                return d + rng.laplace(0.0, self.scale, n)

        GOOD = NoisyCount(1.0, 1.0)
        LEAKY = NoisyCount(0.25, 1.0)
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.mark.slow  # about 5 s
def test_cli_exit_codes_and_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_module(tmp_path, monkeypatch)
    out = tmp_path / "out"
    assert main(["report", "my_mechs:GOOD", "--out", str(out), "--json", "--seed", "1"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["target"] == "user/noisy-count" and rows[0]["verdict"] == "consistent"
    assert rows[0]["epsilon_lower"] <= 1.0
    assert main(["report", "my_mechs:LEAKY", "--out", str(out), "--seed", "1"]) == 1
    assert "VIOLATION" in capsys.readouterr().out
    assert main(["report", "--check", str(out), "my_mechs:LEAKY"]) == 0


def test_cli_bad_input_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "no-such-target", "--out", "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpaudit report: error: no target matches 'no-such-target'")
    assert "\n" not in err
    assert main(["report", "catalogue/laplace-count"]) == 2
    assert "--out DIR is required" in capsys.readouterr().err


@pytest.mark.slow
def test_regenerating_one_target_keeps_the_others(
    tmp_path: Path, rr_target: Target, laplace_target: Target
) -> None:
    generate(
        [rr_target, laplace_target],
        tmp_path,
        seed=3,
        progress=False,
        audit=False,
        command="the command",
    )
    generate([laplace_target], tmp_path, seed=3, progress=False, audit=False)
    index = (tmp_path / "index.md").read_text()
    assert "test--rr.md" in index and "test--laplace.md" in index and "the command" in index
    assert check_up_to_date(tmp_path, [rr_target, laplace_target]) == []
