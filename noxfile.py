"""Environments of the real-library panel (bench/hunt.py, docs/libraries.md): nox sessions.

The audited libraries are never dependencies of dpaudit.  Each part of the panel runs in a
virtualenv of its own, with dpaudit installed editable:

- ``hunt_main``: the project's CI environment (``-c requirements/ci-constraints.txt -e
  '.[dev]'``: numpy 2.4, scikit-learn 1.7.2, diffprivlib, OpenDP) plus python-dp, pipeline-dp,
  torch (CPU) and Opacus (``requirements/hunt-main.txt``): they share it;
- ``hunt_smartnoise``: smartnoise-sql 1.0.10, which pins opendp < 0.15 and pandas < 3;
- ``hunt_tmlt``: tmlt.core 0.20.0, which pins numpy < 2, pandas < 2 and sympy < 1.13.

Run everything (each part measured, then one table written to bench/hunt.md)::

    python -m venv .nox-tool && .nox-tool/bin/pip install nox   # nox in its own venv
    .nox-tool/bin/nox -s hunt

A part alone: ``nox -s hunt_main``; arguments after ``--`` go to ``bench/hunt.py`` (``--only
pipeline_dp_sum --samples 1000``), except ``nox -s hunt_main -- --pytest`` (that part's
adapter tests, in its environment) and ``nox -s hunt_main -- --reports`` (that part's
reproductions, reports/hunt/LIBRARY/).  ``nox -R`` reuses the environments already built.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["hunt"]

CONSTRAINTS = "requirements/ci-constraints.txt"
PYTHON = "3.11"


#: The tests of each part's adapters (skipped in the default suite, where the libraries are
#: absent).
TESTS = {
    "main": [
        "tests/libraries/test_pydp.py",
        "tests/libraries/test_pipeline_dp.py",
        "tests/libraries/test_opacus.py",
        "tests/libraries/test_hunt_reports.py",
        "tests/tooling/test_bench_hunt.py",
    ],
    "smartnoise": ["tests/libraries/test_smartnoise.py", "tests/libraries/test_hunt_reports.py"],
    "tmlt": ["tests/libraries/test_tmlt.py", "tests/libraries/test_hunt_reports.py"],
}


def _part(session: nox.Session, part: str) -> None:
    """Run the part's panel rows (default), its tests (``-- --pytest [pytest args]``) or
    regenerate its reproductions (``-- --reports``)."""
    args = list(session.posargs)
    if args[:1] == ["--pytest"]:
        session.run("python", "-m", "pytest", "-n", "0", *TESTS[part], *args[1:])
        return
    if args[:1] == ["--reports"]:
        session.run("python", "bench/hunt.py", "--reports", part)
        return
    session.run(
        "python", "bench/hunt.py", "--part", part, *(args or ["--json", f".nox/hunt-{part}.json"])
    )


@nox.session(python=PYTHON)
def hunt_main(session: nox.Session) -> None:
    """diffprivlib, OpenDP, python-dp, pipeline-dp, Opacus: the project's CI environment."""
    session.install("-c", CONSTRAINTS, "-e", ".[dev]")
    # not under the constraints: torch 2.13 needs setuptools >= 77 (CI pins 65.5); pip keeps
    # every version already installed (numpy 2.4, scikit-learn 1.7.2) that satisfies them
    session.install("-r", "requirements/hunt-main.txt")
    _part(session, "main")


@nox.session(python=PYTHON)
def hunt_smartnoise(session: nox.Session) -> None:
    """smartnoise-sql 1.0.10 (opendp < 0.15, pandas < 3)."""
    session.install("-r", "requirements/hunt-smartnoise.txt")
    session.install("-e", ".")
    _part(session, "smartnoise")


@nox.session(python=PYTHON)
def hunt_tmlt(session: nox.Session) -> None:
    """tmlt.core 0.20.0 (numpy < 2, pandas < 2, sympy < 1.13)."""
    session.install("-r", "requirements/hunt-tmlt.txt")
    session.install("-e", ".")
    _part(session, "tmlt")


@nox.session(python=False, requires=["hunt_main", "hunt_smartnoise", "hunt_tmlt"])
def hunt(session: nox.Session) -> None:
    """The whole panel: every part measured in its environment, then the table."""
    session.run(
        "python",
        "bench/hunt.py",
        "--combine",
        *(f".nox/hunt-{p}.json" for p in ("main", "smartnoise", "tmlt")),
        "--out",
        "bench/hunt.md",
    )
