"""Reports are a function of their inputs and seed: the privacy curve is computed to the end
(no wall-clock limit), points without a bound are shown, expected rejections are summarised,
and (slow) two generations -- one beside a CPU hog, under another hash seed -- agree byte for
byte, claim verification included (its budgets are counts of boxes, work units and
relaxation candidates, not seconds)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import sympy

from dpaudit.accountant import Accountant
from dpaudit.accountant.domains import Rejection
from dpaudit.events import Exponential, Laplace
from dpaudit.events.stability import LabelFlipped, SubsampledCandidates
from dpaudit.report.contents import (
    CURVE_DELTAS,
    CurveTooSlowError,
    _cpu_safety_net,
    _curve,
    _guarantee_dict,
)
from dpaudit.report.render import _curve_gaps, to_markdown
from dpaudit.theorems.base import Check
from dpaudit.theorems.stability import DP_TO_STABILITY

ROOT = Path(__file__).resolve().parents[2]
R = "replace_one"


def test_curve_lists_every_delta_without_a_bound() -> None:
    # 003 Lemma 7's instance: (0, 0.343)-stable, so no bound at any curve delta <= 0.1
    curve = _curve(SubsampledCandidates(Exponential("1/4", relation=R), 2, 8))
    assert curve["points"] == [] and curve["failures"] == []
    assert [u["delta"] for u in curve["unbounded"]] == [0.0, *CURVE_DELTAS]
    assert curve["unbounded"][0]["reason"] == "no pure-DP guarantee (delta = 0)"
    assert {u["reason"] for u in curve["unbounded"][1:]} == {"no guarantee at this delta"}


@pytest.mark.slow
def test_curve_of_label_flipped_stable_learner_is_complete() -> None:
    # 003 Corollary 1's instance: these points used to time out (> 20 s CPU each)
    plan = LabelFlipped(SubsampledCandidates(Exponential("3/400", relation=R), 1, 134), "1/20")
    curve = _curve(plan)
    assert [p["delta"] for p in curve["points"]] == [0.0, *CURVE_DELTAS]
    assert curve["unbounded"] == [] and curve["failures"] == []
    for p in curve["points"]:
        assert (
            p["epsilon_upper"]
            >= Accountant()
            .guarantee(plan, sympy.Rational(0) if p["delta"] == 0 else p["delta"])
            .epsilon_upper
        )


def test_unbounded_points_are_rendered() -> None:
    curve = {
        "points": [],
        "failures": [],
        "unbounded": [
            {"delta": 0.0, "reason": "no pure-DP guarantee (delta = 0)"},
            {"delta": 1e-12, "reason": "no guarantee at this delta"},
            {"delta": 0.1, "reason": "no guarantee at this delta"},
        ],
    }
    text = to_markdown(_curve_gaps(curve))
    assert (
        "no bound at delta = 0 (no pure-DP guarantee (delta = 0)); 1e-12, 0.1 "
        "(no guarantee at this delta)"
    ) in text
    assert _curve_gaps({"points": [], "failures": [], "unbounded": []}) == []


def test_expected_exclusions_are_summarised_informative_ones_kept() -> None:
    g = Accountant().guarantee(Laplace(1), 0)
    assert g.rejected, "the zCDP conversion is rejected at delta = 0"
    d = _guarantee_dict(g)
    assert "not applicable" not in d["derivation"]
    assert "zCDP to (eps, delta)" in d["expected_exclusions"]
    assert "dpaudit explain" in d["expected_exclusions"]
    assert "not applicable" in g.text()  # explain's view keeps everything
    # a domain condition failing for these parameters is kept in the derivation
    bad = Check(sympy.Symbol("epsilon") >= 0, sympy.false, "refuted", "checked: epsilon = -1")
    kept = Rejection(DP_TO_STABILITY, Laplace(1), (bad,))
    d = _guarantee_dict(dataclasses.replace(g, rejected=(*g.rejected, kept)))
    assert "assumption epsilon >= 0 fails" in d["derivation"]
    assert d["expected_exclusions"].startswith("1 result(s)")


def test_cpu_safety_net_stops_a_runaway_point() -> None:
    start = time.process_time()
    with (
        pytest.raises(CurveTooSlowError, match=r"more than 0\.2 s of CPU"),
        _cpu_safety_net(0.2, "test point"),
    ):
        while time.process_time() - start < 30:
            pass
    assert time.process_time() - start < 10
    with _cpu_safety_net(5, "fast point"):
        sum(range(1000))


_GENERATE = textwrap.dedent("""
    import sys
    from dpaudit.report import generate, load_targets, resolve_targets
    load_targets()
    generate(resolve_targets(sys.argv[2].split(",")), sys.argv[1], seed=2024, progress=False)
""")

#: Targets covering a PLD curve, a stability curve with unbounded points, label flipping,
#: an exponential-mechanism audit, a broken mechanism's audit, and claim verifications by
#: branch-and-bound (003/lemma-7) and by relaxation (000/theorem-3).
_TARGETS = (
    "000/theorem-3",
    "001/margin-selection",
    "003/lemma-7",
    "003/corollary-1",
    "catalogue/laplace-count",
    "broken/broken-laplace-too-little-noise",
)


def _generate(run: Path, hash_seed: str) -> Path:
    """Reports of :data:`_TARGETS` in ``run/reports`` (a relative --out: the index and the
    manifest name the output directory)."""
    run.mkdir()
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-c", _GENERATE, "reports", ",".join(_TARGETS)],
        check=True,
        env=env,
        cwd=run,
        timeout=1800,
    )
    return run / "reports"


@pytest.mark.slow
def test_reports_are_identical_under_load_and_another_hash_seed(tmp_path: Path) -> None:
    quiet = _generate(tmp_path / "quiet", "1")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        loaded = _generate(tmp_path / "loaded", "4242")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    files = sorted(p.relative_to(quiet) for p in quiet.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(loaded) for p in loaded.rglob("*") if p.is_file())
    differ = [str(p) for p in files if (quiet / p).read_bytes() != (loaded / p).read_bytes()]
    assert not differ, f"reports differ between the two runs: {differ}"


def test_the_fingerprint_does_not_depend_on_what_else_the_process_imported() -> None:
    """Importing a sibling module of an audited one (another library's adapters) binds it as
    an attribute of their package; the fingerprint must not change with it."""
    import importlib
    import sys

    from dpaudit.report.fingerprint import fingerprint
    from dpaudit.report.target import TARGETS, load_targets

    load_targets()
    target = TARGETS["diffprivlib/geometric-count"]
    before = fingerprint(target, 2024, None, None)
    name = "mechanisms.libraries.hunt_targets"
    had = name in sys.modules
    importlib.import_module(name)
    try:
        assert fingerprint(target, 2024, None, None) == before
    finally:
        if not had:
            sys.modules.pop(name, None)
            delattr(sys.modules["mechanisms.libraries"], "hunt_targets")


def test_a_library_report_reads_its_own_adapter_module_and_the_shared_helpers_only() -> None:
    """An edit of one library's adapters makes only that library's reports stale: the
    fingerprint of a pipeline-dp report reads its adapter module and the package's shared
    code (``mechanisms/libraries/__init__.py``: LibraryAdapter, adapter_maker), not the other
    libraries' adapter modules, though the process has imported them."""
    import importlib

    from dpaudit.report.fingerprint import _module_files
    from mechanisms.libraries.hunt_targets import pipeline_dp

    for sibling in ("pydp_adapters", "tmlt_adapters", "smartnoise_adapters", "opacus_adapters"):
        importlib.import_module(f"mechanisms.libraries.{sibling}")
    root = Path(__file__).resolve().parents[2]
    for target in pipeline_dp():
        files = {p.resolve().relative_to(root).as_posix() for p in _module_files(target)}
        assert files == {
            "mechanisms/libraries/__init__.py",
            "mechanisms/libraries/pipeline_dp_adapters.py",
        }, target.name
