"""Shared by the real-library tests: skip, with the reason, when a library does not import."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

#: How to get each library of the real-library panel (bench/hunt.py): its nox session.
HUNT = "run these tests in the panel's environment: `nox -s {session} -- --pytest` (noxfile.py)"


def require(module: str, session: str | None = None) -> Any:
    """Import ``module`` or skip the calling test module, saying why (missing, or broken by
    its own dependencies, as diffprivlib 0.6.6 is with scikit-learn >= 1.8).  ``session``: the
    nox session whose environment has it (the panel's libraries are no dependency of
    dpaudit's, so the default suite skips their tests)."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        how = (
            HUNT.format(session=session)
            if session
            else "install the dev extra with requirements/ci-constraints.txt"
        )
        pytest.skip(
            f"{module} does not import here ({type(err).__name__}: {err}); {how}",
            allow_module_level=True,
        )
