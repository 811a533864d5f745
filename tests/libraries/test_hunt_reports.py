"""The panel's reproductions in ``reports/hunt/LIBRARY/`` are up to date (fast check: claims,
fingerprints of the audited code and the library's version, file hashes; no audit).

Their libraries are no dependencies of dpaudit, so each library's check runs only where it
imports (``nox -s hunt_main -- --pytest``, ``nox -s hunt_smartnoise -- --pytest``) and is
skipped elsewhere, CI's default suite included, saying so.  They are regenerated with
``nox -s hunt_main -- --reports`` (mechanisms/libraries/hunt_targets.py).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from dpaudit.report import check_up_to_date
from mechanisms.libraries.hunt_targets import LIBRARIES

HUNT = Path(__file__).resolve().parents[2] / "reports" / "hunt"


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_reproductions_are_up_to_date(library: str) -> None:
    targets, module = LIBRARIES[library]
    try:
        importlib.import_module(module)
    except ImportError as err:
        pytest.skip(
            f"{library} does not import here ({err}): its reports are checked in the panel's "
            "environment (noxfile.py)"
        )
    out = HUNT / library
    if not (out / "manifest.json").exists():
        pytest.skip(f"reports/hunt/{library}/ not generated (nox -s hunt_main -- --reports)")
    problems = check_up_to_date(out, targets())
    assert not problems, "\n".join(problems)
