"""``reports/learning-curves/`` (written by ``dpaudit learn --curves``) lives beside the audit
reports: generating reports keeps it and the up-to-date check does not complain about it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpaudit.report import Target, check_up_to_date, generate


@pytest.mark.slow
def test_report_generation_keeps_the_learning_curves_directory(
    tmp_path: Path, laplace_target: Target
) -> None:
    curves = tmp_path / "learning-curves"
    curves.mkdir()
    (curves / "index.md").write_text("# Learning curves\n", encoding="utf-8")
    (curves / "net-margin.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    generate([laplace_target], tmp_path, seed=5, progress=False)
    assert (curves / "index.md").read_text(encoding="utf-8") == "# Learning curves\n"
    assert (curves / "net-margin.png").exists()
    assert check_up_to_date(tmp_path, [laplace_target]) == []


COMMITTED = Path(__file__).resolve().parents[2] / "reports" / "learning-curves"


def _curve_set(path: Path):
    """A committed learner's JSON back as a CurveSet (the fields the pages read)."""
    import dataclasses
    import json

    from dpaudit.learning_curves import CurvePoint, CurveSet

    data = json.loads(path.read_text(encoding="utf-8"))
    point_fields = {f.name for f in dataclasses.fields(CurvePoint)}
    points = [
        CurvePoint(**{k: v for k, v in p.items() if k in point_fields}) for p in data["points"]
    ]
    fields = {f.name for f in dataclasses.fields(CurveSet)} - {"points"}
    return CurveSet(**{k: data[k] for k in fields}, points=points)


def test_committed_learning_curves_cover_every_learner_and_match_their_numbers() -> None:
    """``reports/learning-curves`` (``dpaudit learn --curves --out reports/learning-curves
    --seed 0``) has a PNG, page and JSON for every registered learner and a row for each in
    the index (no learner silently missing), and every page and the index are what the
    pages code renders from the committed JSON."""
    from dpaudit.learners import load_learners
    from dpaudit.learning_curves.pages import _index, learner_page

    command = "dpaudit learn --curves --seed 0"
    curves = []
    for info in load_learners():
        for suffix in (".png", ".md", ".json"):
            assert (COMMITTED / f"{info.name}{suffix}").is_file(), f"{info.name}{suffix} missing"
        c = _curve_set(COMMITTED / f"{info.name}.json")
        page = (COMMITTED / f"{info.name}.md").read_text(encoding="utf-8")
        assert page == learner_page(c, command, f"{info.name}.png"), info.name
        curves.append(c)
    index = (COMMITTED / "index.md").read_text(encoding="utf-8")
    assert index == _index(curves, command)
