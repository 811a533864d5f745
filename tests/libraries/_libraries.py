"""Shared by the real-library tests: skip, with the reason, when a library does not import."""

from __future__ import annotations

import importlib
from typing import Any

import pytest


def require(module: str) -> Any:
    """Import ``module`` or skip the calling test module, saying why (missing, or broken by
    its own dependencies, as diffprivlib 0.6.6 is with scikit-learn >= 1.8)."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        pytest.skip(
            f"{module} does not import here ({type(err).__name__}: {err}); install the dev "
            "extra with requirements/ci-constraints.txt",
            allow_module_level=True,
        )
