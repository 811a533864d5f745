"""Report targets audited by a record-domain search (``Target.records``), and the slow
regeneration test's comparison of reports whose audit cannot be reproduced from its seed.

The audits certify at confidence 0.95 with 400 samples per dataset (seeds fixed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from test_reports_up_to_date import same, unreproducible

from dpaudit.report import Records, Target, generate
from dpaudit.report.contents import _records_audit


def seeded_sum(data: np.ndarray, rng: np.random.Generator) -> float:
    """Sum of records clipped to [0, 1] with Laplace noise of scale 1 (1-DP, add/remove; NaN
    read as 0: np.clip alone passes it, which the search tries second)."""
    return float(np.clip(np.nan_to_num(data[:, 0]), 0.0, 1.0).sum() + rng.laplace(0.0, 1.0))


def unseeded_sum(data: np.ndarray, rng: np.random.Generator) -> float:
    """The same mechanism drawing from the OS (as OpenDP does): the seed does not fix it."""
    own = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    return float(np.clip(np.nan_to_num(data[:, 0]), 0.0, 1.0).sum() + own.laplace(0.0, 1.0))


def _target(fn: object, name: str) -> Target:
    return Target(
        name=name,
        title=name,
        group="test",
        epsilon=1.0,
        mechanism=lambda: fn,
        records=Records(((-1.0, 2.0),), "add-remove", (0, 3)),
        samples=400,
        source=f"{__name__}:{getattr(fn, '__name__', '')}",
    )


def test_records_target_reports_the_domain_and_the_pair_found(tmp_path: Path) -> None:
    generate([_target(seeded_sum, "test/records")], tmp_path, seed=1, progress=False)
    data = json.loads((tmp_path / "test--records.json").read_text(encoding="utf-8"))
    assert data["target"]["records"]["relation"] == "add-remove"
    assert data["audit"]["pair"].startswith("add-remove, ")
    assert data["audit"]["reproducible"] is True and not data["audit"]["violation"]
    text = (tmp_path / "test--records.md").read_text(encoding="utf-8")
    assert "record domain searched" in text


def test_records_target_refuses_pairs() -> None:
    with pytest.raises(ValueError, match="records must be a Records"):
        Target(
            name="test/x",
            title="x",
            group="test",
            epsilon=1.0,
            mechanism=lambda: seeded_sum,
            pairs=lambda: [],
            records=Records(((0.0, 1.0),)),
        )
    with pytest.raises(ValueError, match="relation must be one of"):
        Records(((0.0, 1.0),), "swap")


@pytest.mark.slow
def test_unreproducible_reports_are_compared_on_what_the_seed_fixes(tmp_path: Path) -> None:
    """Two generations of an unseeded target differ in their audit numbers but match on
    everything else; a change of a seed-fixed part is still caught."""
    targets = [_target(seeded_sum, "test/seeded"), _target(unseeded_sum, "test/unseeded")]
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        generate(targets, out, seed=3, progress=False, command="dpaudit report all")
    assert unreproducible(b) == {"test--unseeded"}
    loose = unreproducible(b)
    names = [p.name for p in sorted(b.glob("*.*")) if p.suffix in (".md", ".json")]
    assert all(same(a / n, b / n, loose) for n in names)
    assert (a / "test--unseeded.json").read_bytes() != (b / "test--unseeded.json").read_bytes()
    data = json.loads((b / "test--unseeded.json").read_text(encoding="utf-8"))
    data["target"]["epsilon"] = 2.0
    (b / "test--unseeded.json").write_text(json.dumps(data), encoding="utf-8")
    assert not same(a / "test--unseeded.json", b / "test--unseeded.json", loose)
    (b / "test--seeded.md").write_text("edited\n", encoding="utf-8")
    assert not same(a / "test--seeded.md", b / "test--seeded.md", loose)


def count_raising_when_empty(data: np.ndarray, rng: np.random.Generator) -> float:
    """A noisy count that raises on the empty dataset (as pipeline-dp's COUNT does)."""
    if len(data) == 0:
        raise ValueError("col must be non-empty")
    return float(len(data) + rng.laplace(0.0, 1.0))


def test_errors_stay_outputs_in_the_growth_audits() -> None:
    """With ``on_error="output"`` among the audit options, the growth points re-audit the pair
    found with exceptions as outcomes too (they aborted the report: 'audit could not run')."""
    target = Target(
        name="test/raises",
        title="raises",
        group="test",
        epsilon=1.0,
        mechanism=lambda: count_raising_when_empty,
        records=Records(((0.0, 1.0),), "add-remove", (0, 1)),
        samples=200,  # one growth point, at 100 samples
        audit_options={"on_error": "output"},
        expect="broken",
        source=f"{__name__}:count_raising_when_empty",
    )
    assert target.records is not None
    audited = _records_audit(target, target.records, count_raising_when_empty, seed=1)
    assert audited["violation"] and len(audited["growth"]) == 2
