"""Report targets audited by one training run with m canaries (Steinke, Nasr, Jagielski
2023, "Privacy auditing with one (1) training run"; :func:`dpaudit.audit.audit_one_run`,
:class:`dpaudit.report.OneRun`): the project's noisy gradient descent with white-box gradient
canaries, a registered learner with black-box input canaries, and the deliberately broken
trainer (noise 10x too small, group ``broken``).  Registered by
:func:`mechanisms.report_targets.register`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.report import OneRun, Target

__all__ = ["ONE_RUN_CANARIES", "ONE_RUN_DELTA", "one_run_targets"]

#: Canaries of the one-run training audits (each audit runs in about a second).
ONE_RUN_CANARIES = 1000
#: The delta the one-run trainers are claimed and audited at.
ONE_RUN_DELTA = 1e-5
#: Full-batch noisy gradient descent of the one-run targets: noise multiplier 10, 25 steps
#: (mu-GDP with mu = 0.5).
_NOISY_GD: dict[str, Any] = {"noise_multiplier": 10.0, "steps": 25}


def _noisy_gd_one_run(broken: bool) -> Target:
    """Noisy gradient descent with m white-box Dirac gradient canaries, audited by one run;
    ``broken``: the same trainer with noise 10x too small, claiming the same plan."""
    from mechanisms.broken_training import BrokenNoisyGDTooLittleNoise
    from mechanisms.one_run_training import NoisyGDCanaryTrainer

    honest = NoisyGDCanaryTrainer(m=ONE_RUN_CANARIES, canaries="gradient", **_NOISY_GD)
    trainer = (
        BrokenNoisyGDTooLittleNoise(m=ONE_RUN_CANARIES, canaries="gradient", **_NOISY_GD)
        if broken
        else honest
    )
    what = (
        f"{ONE_RUN_CANARIES} gradient canaries, noise multiplier "
        f"{_NOISY_GD['noise_multiplier']:g}, {_NOISY_GD['steps']} full-batch steps"
    )
    summary = (
        "Full-batch noisy gradient descent on the rho-hinge loss of the noisy-SGD margin "
        "learners, one release of the Gaussian primitive per step, with white-box Dirac "
        "gradient canaries (an included canary adds -L e_i to every step's summed gradient; "
        "score: the final model's coordinate i), audited by one training run. Claimed: the "
        "accountant's epsilon for its plan at delta 1e-5, rounded up."
    )
    if broken:
        summary += (
            " What is wrong: the noise standard deviation is divided by 10 while the "
            "declared plan states the intended noise; true privacy: mu-GDP with mu = 5 "
            "instead of 0.5."
        )
    cls = type(trainer)
    return Target(
        name="broken/noisy-gd-too-little-noise-one-run"
        if broken
        else "one-run/noisy-gd-gradient-canaries",
        title=f"{trainer.name} (one-run audit)",
        group="broken" if broken else "one-run training",
        # the accountant's epsilon rounded up to 4 decimals: a claim it proves
        epsilon=math.ceil(honest.claimed_epsilon(ONE_RUN_DELTA) * 10**4) / 10**4,
        delta=ONE_RUN_DELTA,
        summary=summary,
        plan=trainer.plan(),  # the declared plan (the broken one declares the honest noise)
        expect="broken" if broken else "private",
        source=f"{cls.__module__}:{cls.__qualname__} ({what})",
        one_run=OneRun(train=lambda: trainer, m=ONE_RUN_CANARIES),
    )


def _learner_one_run() -> Target:
    """Black-box input canaries on the registered learner ``noisy-sgd-margin`` (000
    Algorithm 1 via Algorithm 3), audited by one run: 60 base records of R^4, m canary
    records with random directions and labels, the learner at its configured (1, 1e-5)."""
    from mechanisms.one_run_training import learner_canary_trainer

    params: dict[str, Any] = {
        "epsilon": 1.0,
        "delta": ONE_RUN_DELTA,
        "steps": 200,
        "dimension": 10,
        "repetitions": 1,
        "feature_norm": 3.0,
    }

    def train() -> Any:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(60, 4))
        y = (X[:, 0] > 0).astype(int)
        return learner_canary_trainer("noisy-sgd-margin", X, y, ONE_RUN_CANARIES, **params)

    return Target(
        name="one-run/noisy-sgd-margin-input-canaries",
        title="noisy-sgd-margin-input-canaries (one-run audit)",
        group="one-run training",
        epsilon=1.0,
        delta=ONE_RUN_DELTA,
        summary=(
            "The registered private learner noisy-sgd-margin (000 Nguyen-Ullman-Zakynthinou "
            "2020, Algorithm 1 via Algorithm 3: JL projection to R^10, noisy SGD on the margin "
            "loss, 200 steps, one run) configured for (1, 1e-5)-DP, audited by one training "
            "run as a black box: canary records with random directions and random labels are "
            "added to its 60 training records when included; score: the fitted model's "
            "confidence in the canary's label. One canary is one added record."
        ),
        expect="private",
        source=(
            "mechanisms.one_run_training:learner_canary_trainer on noisy-sgd-margin "
            f"({ONE_RUN_CANARIES} input canaries)"
        ),
        one_run=OneRun(train=train, m=ONE_RUN_CANARIES),
    )


def one_run_targets() -> list[Target]:
    """The training algorithms audited by one run with m canaries (Steinke, Nasr, Jagielski
    2023): noisy gradient descent with white-box gradient canaries, a registered learner
    with black-box input canaries (both private), and the noisy gradient descent with noise
    10x too small (group ``broken``, expected to be caught)."""
    return [_noisy_gd_one_run(False), _learner_one_run(), _noisy_gd_one_run(True)]
