"""Mechanisms for the Dask tests: picklable, batched, and some that fail exactly once.

Workers may run in other processes, so these live in a module the tests register with
``cloudpickle.register_pickle_by_value`` (workers need not be able to import it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np


class Laplace:
    """``d + Laplace(scale)``: epsilon = 1 / scale for neighbours at distance 1."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.name = f"laplace(scale={scale})"

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.laplace(0.0, self.scale))

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + rng.laplace(0.0, self.scale, n)


def _in_worker() -> bool:
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


def _first_time(marker: Path) -> bool:
    """True exactly once per marker, across threads and processes (atomic create)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


class FailingOnce(Laplace):
    """A Laplace mechanism whose first batch run on a Dask worker fails.

    ``how="raise"`` raises (the task errs and is retried); ``how="die"`` ends the worker
    process abruptly (``os._exit``), as a crashed or killed machine would.
    """

    def __init__(self, scale: float, marker: Path, how: str = "raise") -> None:
        super().__init__(scale)
        self.marker = Path(marker)
        self.how = how

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        if _in_worker() and _first_time(self.marker):
            if self.how == "die":
                os._exit(1)
            raise RuntimeError("injected failure on the first attempt")
        return super().batch(d, n, rng)


class AlwaysFailing(Laplace):
    """Fails on every Dask worker (works in the client process, which draws batch 0)."""

    def batch(self, d: float, n: int, rng: np.random.Generator) -> Any:
        if _in_worker():
            raise RuntimeError("injected permanent failure")
        return super().batch(d, n, rng)


#: A module that exists nowhere: unpickling :class:`UnimportableOnWorkers` imports it.
MISSING_MODULE = "dpaudit_test_module_missing_on_workers"


class UnimportableOnWorkers(Laplace):
    """Works in the client process; a worker that receives it cannot import its module (as
    when a user's module is not installed on the cluster)."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        import importlib

        return importlib.import_module, (MISSING_MODULE,)


#: The object ``dpaudit audit _dask_mechanisms:UNIMPORTABLE`` loads.
UNIMPORTABLE = UnimportableOnWorkers(1.0)

# Textbook float noise: these claims are about real arithmetic, so the auditor's
# floating-point ('bits') family is left out (dpaudit.audit.audit, arithmetic).
Laplace.arithmetic = "real"  # type: ignore[attr-defined]
FailingOnce.arithmetic = "real"  # type: ignore[attr-defined]
AlwaysFailing.arithmetic = "real"  # type: ignore[attr-defined]
UnimportableOnWorkers.arithmetic = "real"  # type: ignore[attr-defined]


class GroupBy:
    """{group: count + rounded Laplace} for the groups present: a structured output whose
    key set leaks (tests of structured outputs on Dask)."""

    def __call__(self, data: Any, rng: np.random.Generator) -> dict[str, float]:
        found: dict[str, float] = {}
        for group in data:
            found[group] = found.get(group, 0.0) + 1.0
        return {g: float(np.round(c + rng.laplace())) for g, c in sorted(found.items())}


class RaisesOnEmpty:
    """A rounded noisy count that raises ValueError on an empty dataset (``on_error``)."""

    def __call__(self, data: Any, rng: np.random.Generator) -> float:
        if len(data) == 0:
            raise ValueError("empty")
        return float(np.round(len(data) + rng.laplace()))

    def batch(self, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        if len(data) == 0:
            raise ValueError("empty")
        return np.round(len(data) + rng.laplace(0.0, 1.0, n))
