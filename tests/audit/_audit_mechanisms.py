"""Small picklable mechanisms for the auditor tests (module level, so workers can load them)."""

from __future__ import annotations

import numpy as np


class ShiftedLaplace:
    """``d + Laplace(scale)``: epsilon = 1/scale for datasets at distance 1."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.name = f"laplace(scale={scale:g})"

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.laplace(0.0, self.scale))

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + rng.laplace(0.0, self.scale, n)


def laplace_loop(d: float, rng: np.random.Generator) -> float:
    """Laplace(1) around d, one output per call (no batch method)."""
    return float(d + rng.laplace(0.0, 1.0))


def coin_label(d: int, rng: np.random.Generator) -> str:
    """Randomized response on a bit with epsilon = ln 3, answering with strings."""
    truthful = rng.random() < 0.75
    return ("yes" if d else "no") if truthful else ("no" if d else "yes")


def leaky_pattern(d: int, rng: np.random.Generator) -> tuple[int, int]:
    """A pair whose second coordinate is (1, 1) only under d = 1: infinite epsilon."""
    a = int(rng.random() < 0.5)
    return (a, a & d)


def global_numpy_laplace(d: float, rng: np.random.Generator) -> float:
    """Laplace(1) drawn from NumPy's *global* state (ignores its rng): not reproducible."""
    return float(d + np.random.laplace(0.0, 1.0))


def python_random_laplace(d: float, rng: np.random.Generator) -> float:
    """Laplace(1) drawn from Python's ``random`` module (ignores its rng)."""
    import random

    return float(d + random.expovariate(1.0) - random.expovariate(1.0))


def own_generator_laplace(d: float, rng: np.random.Generator) -> float:
    """Laplace(1) from a fresh unseeded generator of its own (ignores its rng)."""
    return float(d + np.random.default_rng().laplace(0.0, 1.0))


class GlobalBatch:
    """Batched Laplace(1) from NumPy's global state (for the worker-process tests)."""

    name = "global-batch"

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + np.random.laplace(0.0, 1.0))

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + np.random.laplace(0.0, 1.0, n)


def failing(d: float, rng: np.random.Generator) -> float:
    """A mechanism with a bug: it always raises."""
    raise ZeroDivisionError("division by zero in the user's code")


class ShiftedGaussian:
    """``d + N(0, sigma^2)``: GDP mu = 1/sigma for datasets at distance 1."""

    def __init__(self, sigma: float) -> None:
        self.sigma = sigma
        self.name = f"gaussian(sigma={sigma:g})"

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.normal(0.0, self.sigma))

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + rng.normal(0.0, self.sigma, n)


# Textbook float noise: these claims are about real arithmetic, so the auditor's
# floating-point ('bits') family is left out (dpaudit.audit.audit, arithmetic).
for _textbook in (
    ShiftedLaplace,
    GlobalBatch,
    ShiftedGaussian,
    laplace_loop,
    coin_label,
    leaky_pattern,
    global_numpy_laplace,
    python_random_laplace,
    own_generator_laplace,
    failing,
):
    _textbook.arithmetic = "real"  # type: ignore[attr-defined]


class LaplacePair:
    """Two coordinates: ``d + Laplace(1)`` and Laplace(1) (a vector output, batched)."""

    name = "laplace-pair"

    def __call__(self, d: float, rng: np.random.Generator) -> np.ndarray:
        return self.batch(d, 1, rng)[0]

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        out = rng.laplace(0.0, 1.0, (n, 2))
        out[:, 0] += d
        return out


class FailsInWorkers:
    """Laplace(1) around d in the process that made it; raises in any other process (a
    worker), so an audit with workers fails after its pool started."""

    name = "fails-in-workers"

    def __init__(self) -> None:
        import os

        self.home = os.getpid()

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(self.batch(d, 1, rng)[0])

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        import os

        if os.getpid() != self.home:
            raise RuntimeError("this mechanism only runs in the process that made it")
        return d + rng.laplace(0.0, 1.0, n)
