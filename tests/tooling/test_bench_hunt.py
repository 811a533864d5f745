"""bench/hunt.py (the real-library panel) runs its rows and writes its table: checked on a
stub adapter with no library installed, so the script cannot rot while the libraries live in
their own environments (noxfile.py).

The stub is a count with Laplace noise computed on integers plus a float draw; the audits use
few samples (200 per dataset) and fixed seeds, so the rows are deterministic; what is checked
is the table code, not a statistical claim (the panel's statistics are audit_records').
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import numpy as np

from mechanisms.libraries import LibraryAdapter

_PATH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "hunt.py"
_SPEC = importlib.util.spec_from_file_location("bench_hunt", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
hunt = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_hunt"] = hunt  # its dataclasses look their module up
_SPEC.loader.exec_module(hunt)


def _count(scale: float) -> LibraryAdapter:
    """A count of records with two-sided geometric noise of the given scale (1-DP at scale 1;
    scale 0.1 leaks: epsilon 10)."""

    def batch(data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        p = 1 - np.exp(-1 / scale)
        noise = rng.geometric(p, n) - rng.geometric(p, n)
        return (len(data) + noise).astype(float)

    return LibraryAdapter(
        name="stub-count",
        library="stub",
        api="count + geometric noise",
        summary="a stub",
        domain=[(0.0, 1.0)],
        relation="add-remove",
        sizes=(0, 3),
        epsilon=1.0,
        delta=0.0,
        seedable=True,
        release=lambda data, rng: float(batch(data, 1, rng)[0]),
        release_batch=batch,
    )


def _row(scale: float, target: str = "correct", needs: tuple[str, ...] = ()) -> dict:
    entry = hunt.Entry("unused", "stub_count", 200, target, needs)
    return hunt.run_entry(entry, set(), adapter=_count(scale), seed=0)


def test_a_correct_row_and_a_false_alarm_row_make_a_table() -> None:
    good = _row(1.0)
    bad = _row(0.1)  # a broken stub declared "correct": the panel must call it a false alarm
    assert good["status"] == bad["status"] == "ran"
    assert not good["violation"] and not good["false_alarm"]
    assert bad["violation"] and bad["false_alarm"]
    assert good["final_samples"] == 400 and good["search_samples"] > 0
    text = hunt.table([good, bad])
    lines = text.strip().splitlines()
    assert len(lines) == 4 and lines[0].startswith("| library | function | claim")
    assert "none" in lines[2] and "**FALSE ALARM**" in lines[3] and "**yes**" in lines[3]
    page = hunt.markdown(
        {"stub": {"environment": hunt.environment(), "features": [], "rows": [good, bad]}},
        "test",
    )
    assert "2 functions, 2 audited, 1 flagged, 1 false alarms" in page
    json.dumps([good, bad])  # rows are JSON-ready (the parts are combined from JSON)


def test_a_missing_feature_and_a_missing_library_are_named() -> None:
    row = _row(1.0, "NaN through a clamp", ("edge values",))
    assert row["missing"] == ["edge values"]
    assert "(needs edge values: not on main yet)" in hunt.table([row])
    absent = hunt.run_entry(
        hunt.Entry("mechanisms.libraries.tmlt_adapters", "tmlt_count", 10), set()
    )
    assert absent["status"] in ("not installed", "error")


def test_a_dataset_dependent_claim_becomes_its_largest_value_without_the_feature() -> None:
    stub = _count(1.0)
    stub.epsilon = lambda data: 1.0 + 1.0 / max(len(data), 1)
    assert hunt._constant_claim(stub) == 2.0  # sizes (0, 3): the claim at 1 record
    row = hunt.run_entry(hunt.Entry("unused", "stub", 200), set(), adapter=stub, seed=0)
    assert row["claim"] == "2" and row["claim_note"]


def test_every_panel_entry_names_an_adapter_of_its_module() -> None:
    import ast

    entries = [e for part in hunt.PARTS.values() for e in part]
    assert len(entries) >= 15
    for e in entries:
        path = pathlib.Path(*e.module.split(".")).with_suffix(".py")
        tree = ast.parse((_PATH.parents[1] / path).read_text())
        names = {
            t.id
            for n in tree.body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        assert e.adapter in names, (e.module, e.adapter)
        assert set(e.needs) <= set(hunt.FEATURES)
