"""A small mechanism for the CLI fuzz test (``dpaudit audit _fuzz_mechanisms:laplace``)."""

from __future__ import annotations

import numpy as np


class Laplace:
    """``d + Laplace(1)``, batched: epsilon = 1 for neighbours at distance 1."""

    name = "fuzz-laplace"
    epsilon = 1.0

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(np.sum(d) + rng.laplace())

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return float(np.sum(d)) + rng.laplace(0.0, 1.0, n)


laplace = Laplace()

# Textbook float noise: these claims are about real arithmetic, so the auditor's
# floating-point ('bits') family is left out (dpaudit.audit.audit, arithmetic).
Laplace.arithmetic = "real"  # type: ignore[attr-defined]
