"""The modules of this package that register privacy claims with dpaudit.

Each module registers the claims its paper states at import
(:func:`dpaudit.verify.register_claim`).  dpaudit finds them through the entry point
``mechanisms`` of the group ``dpaudit.claims`` (``pyproject.toml``), which names
:func:`register`; see :mod:`dpaudit.plugins`.
"""

from __future__ import annotations

import importlib

__all__ = ["CLAIM_MODULES", "register"]

#: The claim modules, in the order their claims are registered (the rows of
#: ``dpaudit verify --all``).
CLAIM_MODULES: tuple[str, ...] = (
    "mechanisms.decision_lists",
    "mechanisms.winnow",
    "mechanisms.halfspaces",
    "mechanisms.margin",
    "mechanisms.private_prediction",
    "mechanisms.exponential_learner",
)


def register() -> list[str]:
    """Import every claim module, in order (the entry point of the group ``dpaudit.claims``).

    Returns:
        The modules imported.

    Raises:
        ImportError: (or what the module raises) when a claim module fails to import; the
            claims of the modules before it are registered.
    """
    for name in CLAIM_MODULES:
        importlib.import_module(name)
    return list(CLAIM_MODULES)
