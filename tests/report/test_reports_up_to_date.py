"""The committed reports in ``reports/`` are up to date.

Fast (default): :func:`dpaudit.report.check_up_to_date` recomputes the cheap part of every
report (claim, declared plan, accountant guarantee and derivation) and the fingerprint of
the inputs of the expensive part (the audited code's source, seed, samples, plan, claim), and
checks that no generated file was edited.  Slow: every privacy curve recomputed (the
accountant's part of the reports, half a minute); regenerate everything into a temporary
directory and compare byte for byte (also catches changes of the auditor's or verifier's own
code).  Regenerate with ``dpaudit report all --out reports --seed 2024``.

A report whose audit is not reproducible from its seed (``"reproducible": false`` in its JSON:
the audited code draws randomness the seed does not fix, as OpenDP's CSPRNG does) cannot be
compared byte for byte.  For those (marked in the committed or the regenerated JSON: the
mark comes from a probe that a one-bit output can pass by chance) the slow test compares what
the seed does fix: the JSON without its ``audit`` and ``verdict`` (target, claim, plan,
guarantee, verification, curve, fingerprint), that the regenerated audit ran (no error), and
the index and manifest without their lines and entries (and without the index's findings line
and hash, which their verdicts feed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpaudit.report import (
    REGENERATE_COMMAND,
    REPORTS_SEED,
    TARGETS,
    check_up_to_date,
    generate,
    load_targets,
)

REPORTS = Path(__file__).resolve().parents[2] / "reports"


@pytest.mark.slow
def test_committed_reports_are_up_to_date() -> None:
    load_targets()
    problems = check_up_to_date(REPORTS)
    assert not problems, (
        f"reports/ is stale; regenerate with `{REGENERATE_COMMAND}`:\n" + "\n".join(problems)
    )


def test_cli_check_with_curves_on_one_committed_report() -> None:
    from dpaudit.cli import main

    assert main(["report", "--check", str(REPORTS), "--curves", "catalogue/laplace-count"]) == 0


@pytest.mark.slow
def test_committed_privacy_curves_are_up_to_date() -> None:
    """Every report's privacy curve recomputed (about half a minute): catches an accountant
    or PLD change without the full regeneration."""
    load_targets()
    problems = check_up_to_date(REPORTS, curves=True)
    assert not problems, (
        f"reports/ is stale; regenerate with `{REGENERATE_COMMAND}`:\n" + "\n".join(problems)
    )


@pytest.mark.slow
def test_full_regeneration_matches_the_committed_reports(tmp_path: Path) -> None:
    load_targets()
    generate(
        list(TARGETS.values()),
        tmp_path,
        seed=REPORTS_SEED,
        progress=False,
        command=REGENERATE_COMMAND,
    )
    # either side marked: the reproducibility probe of an audit draws twice with one seed and
    # compares, and a low-entropy output (OpenDP's randomized response: one bit) can agree by
    # chance, so the mark itself can differ between runs of an unseedable mechanism
    loose = unreproducible(tmp_path) | unreproducible(REPORTS)
    differ = [
        p.name
        for p in sorted(tmp_path.glob("*.*"))
        if p.suffix in (".md", ".json") and not same(REPORTS / p.name, p, loose)
    ]
    assert not differ, f"regenerated reports differ: {differ}"


def unreproducible(out: Path) -> set[str]:
    """Slugs of the reports in ``out`` whose audit is not reproducible from its seed."""
    slugs = set()
    for path in out.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        audit = data.get("audit") if isinstance(data, dict) else None
        if isinstance(audit, dict) and audit.get("reproducible") is False:
            slugs.add(path.stem)
    return slugs


def same(committed: Path, fresh: Path, loose: set[str]) -> bool:
    """Whether a regenerated file matches the committed one (see the module docstring for
    the reports in ``loose``, whose audits are not reproducible)."""
    if not committed.exists():
        return False
    if not loose or committed.read_bytes() == fresh.read_bytes():
        return committed.read_bytes() == fresh.read_bytes()
    if fresh.stem in loose:
        if fresh.suffix == ".md":
            return True  # its numbers are the audit's; the JSON below is compared
        old, new = (json.loads(p.read_text(encoding="utf-8")) for p in (committed, fresh))
        audit = new.get("audit") or {}
        fixed = {k: v for k, v in new.items() if k not in ("audit", "verdict")}
        return {
            k: v for k, v in old.items() if k not in ("audit", "verdict")
        } == fixed and "error" not in audit
    if fresh.name == "index.md":
        return _index_lines(committed, loose) == _index_lines(fresh, loose)
    if fresh.name == "manifest.json":
        return _manifest(committed, loose) == _manifest(fresh, loose)
    return False


def _index_lines(path: Path, loose: set[str]) -> list[str]:
    return [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if not any(f"]({slug}.md)" in line for slug in loose)
        and not line.startswith(("Unexpected findings:", "No unexpected finding:"))
    ]


def _manifest(path: Path, loose: set[str]) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("index", None)
    data["targets"] = {
        name: entry
        for name, entry in data["targets"].items()
        if name.replace("/", "--") not in loose
    }
    return data


def test_a_nested_infinite_value_is_written_as_text_not_invalid_json() -> None:
    """An infinite or NaN float anywhere in a report (a growth point, a diagnostic) is
    written as its text: strict JSON, as the results' to_dict do for their own fields (CI's
    regeneration once stopped on "Out of range float values are not JSON compliant: inf")."""
    from dpaudit.report.writing import _dump

    text = _dump({"audit": {"growth": [{"epsilon_lower": float("inf")}], "p": float("nan")}})
    assert json.loads(text) == {"audit": {"growth": [{"epsilon_lower": "inf"}], "p": "nan"}}
