"""The settings of the committed reports, readable without importing the report machinery
(``dpaudit report --help`` and ``--list`` read them)."""

from __future__ import annotations

__all__ = ["REGENERATE_COMMAND", "REPORTS_SEED"]

#: The seed of the reports committed in ``reports/``.
REPORTS_SEED = 2024
#: The one command that regenerates ``reports/`` (run from the repository root).
REGENERATE_COMMAND = f"dpaudit report all --out reports --seed {REPORTS_SEED}"
