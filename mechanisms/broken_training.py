"""Deliberately broken trainers for one-run audits: each claims a privacy plan its code does
not follow.  They exist to show that :func:`dpaudit.audit.audit_one_run` catches the bug.
Never use them to protect data.  (Kept apart from :mod:`mechanisms.broken`, the broken
catalogue mechanisms, so that importing those does not import the learners.)
"""

from __future__ import annotations

import dataclasses

import sympy

from mechanisms.one_run_training import NoisyGDCanaryTrainer
from mechanisms.primitives import GaussianMechanism

__all__ = ["BrokenNoisyGDTooLittleNoise"]


@dataclasses.dataclass(frozen=True)
class BrokenNoisyGDTooLittleNoise(NoisyGDCanaryTrainer):
    """Noisy gradient descent with canaries (:class:`NoisyGDCanaryTrainer`) whose noise is
    ``bug_factor`` (default 10) times too small, while :meth:`plan` and
    :meth:`claimed_epsilon` still state the intended noise.

    What is wrong: the noise standard deviation is divided by ``bug_factor`` (a noise
    multiplier applied twice, or sigma confused with sigma^2).  True privacy: the plan with
    sigma / ``bug_factor``, i.e. mu-GDP with mu = ``bug_factor`` sqrt(T) / noise_multiplier
    instead of sqrt(T) / noise_multiplier.
    """

    bug_factor: float = 10.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (isinstance(self.bug_factor, (int, float)) and self.bug_factor > 0):
            raise ValueError(f"bug_factor must be a number > 0, got {self.bug_factor!r}")

    @property
    def name(self) -> str:
        return f"broken-noisy-gd-{self.canaries}-canaries-noise/{self.bug_factor:g}"

    def _noise(self) -> GaussianMechanism:
        sigma = self._sigma() / sympy.nsimplify(self.bug_factor)
        return GaussianMechanism(sigma, self.loss.lipschitz)
