"""The committed reports in ``reports/`` are up to date.

Fast (default): :func:`dpaudit.report.check_up_to_date` recomputes the cheap part of every
report (claim, declared plan, accountant guarantee and derivation) and the fingerprint of
the inputs of the expensive part (the audited code's source, seed, samples, plan, claim), and
checks that no generated file was edited.  Slow: regenerate everything into a temporary
directory and compare byte for byte (also catches changes of the auditor's or verifier's own
code).  Regenerate with ``dpaudit report all --out reports --seed 2024``.
"""

from __future__ import annotations

from pathlib import Path

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


def test_committed_reports_are_up_to_date() -> None:
    load_targets()
    problems = check_up_to_date(REPORTS)
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
    differ = [
        p.name
        for p in sorted(tmp_path.glob("*.*"))
        if p.suffix in (".md", ".json") and (REPORTS / p.name).read_bytes() != p.read_bytes()
    ]
    assert not differ, f"regenerated reports differ: {differ}"
