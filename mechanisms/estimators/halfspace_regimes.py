"""The labelled practical regimes (``CURVE_REGIMES``) and the learning-curve notes of the
halfspace learners (:mod:`mechanisms.estimators.halfspace`): why the papers' parameters do
not learn at practical n, in the papers' own numbers, and what the practical regimes change
while keeping the privacy proof (each regime's comment says why the proof still holds)."""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "AUTO_STEPS",
    "EFFICIENT_MARGIN_REGIMES",
    "KERNEL_MARGIN_REGIMES",
    "MARGIN_SELECTION_REGIMES",
    "NET_MARGIN_REGIMES",
    "NEURAL_NET_NOTE",
    "NEURAL_NET_REGIMES",
    "NOISY_SGD_REGIMES",
    "PRACTICAL_NOTE",
    "PURE_MARGIN_REGIMES",
    "RANDOM_CANDIDATES_NOTE",
    "SELECTION_NOTE",
    "kernel_notes",
    "phased_note",
    "projection_note",
    "steps_note",
]

#: ``steps="auto"``: at most this many noisy-SGD steps per run.
AUTO_STEPS = 100_000


def steps_note(n: int, repetitions: int) -> str:
    """The papers' n^2 noisy-SGD steps at n against what ``steps="auto"`` runs."""
    return (
        f"The papers run n^2 = {n * n:,} noisy-SGD steps per run at n = {n:,} "
        f"({repetitions} runs); the curves use steps='auto', min(n^2, {AUTO_STEPS:,}) steps "
        "with the papers' noise scale sigma kept (calibrated for n^2 steps), so the privacy "
        "proof holds and the run spends less than the papers' budget (the accounted epsilon "
        "in the tables). Fewer steps at the same sigma also average less noise away: at "
        "these n BST14's noise dominates every step, the learned w is close to a random "
        "direction, and a random halfspace errs with probability 1/2 on any data (w and -w "
        "are equally likely), above the majority-class error of unbalanced data such as "
        "breast-cancer's -- not a labelling bug (the practical regime below runs the same "
        "feature map, labels and decision function and learns)."
    )


#: The practical regime's note (noisy-SGD learners).
PRACTICAL_NOTE = (
    "Practical regime (labelled 'practical: ...'): optimizer='calibrated', full-batch noisy "
    "projected gradient descent (mechanisms.calibrated_gd) whose noise sigma is calibrated "
    "by the accountant so that the plan -- T steps of Gaussian(sigma, 2L/n, replace-one), "
    "composed exactly (Dong-Roth-Su 2019 Cor. 3.3, Balle-Wang 2018 Thm 8) -- is within the "
    "requested (epsilon, delta); the fit is still refused if the accounted plan exceeds "
    "it. Its privacy is proven at every setting; the paper's utility theorem is not claimed "
    "for it."
)


def phased_note(n: int, repetitions: int) -> str:
    """What the default optimiser of 001's Algorithm 2 runs at n."""
    return (
        f"001 Algorithm 2 step 4 runs Algorithm 4 (phased SGD + confidence boosting, "
        f"reconstructed: mechanisms.phased_sgd): {n.bit_length() - 1} phases on disjoint "
        f"halving batches, {n - 1:,} gradient steps per run at most ({repetitions} runs), "
        "Gaussian noise on each phase's average iterate calibrated to the stability "
        "sensitivity 2 L eta_i; optimizer='bst14' runs the earlier BST14 stand-in instead. "
        "Both stay noise-dominated at these n: a noise-dominated w is close to a random "
        "direction, whose expected error is 1/2 on any data, above the majority-class error "
        "of unbalanced data (breast-cancer)."
    )


def projection_note(cls: Any, n: int, d: int, doc: str, formula: str, margin_name: str) -> str:
    """Why an enumerating learner levels off: the projected dimension its theorem asks for
    (alpha = 0.1, beta = 0.05, the O(.)'s constant taken as 1) against the one it runs at."""
    default = cls()
    margin = float(getattr(default, margin_name, 0.0) or 2.0 ** -int(default.grid))
    if doc == "000":
        dims = math.log(n / (0.1 * 0.05)) / margin**2
    else:
        dims = math.log(n / 0.05) / margin**2
    k = min(d, math.ceil(dims))
    return (
        f"{doc} projects to {formula} dimensions; with the O(.)'s constant taken as 1, at "
        f"n = {n:,}, alpha = 0.1, beta = 0.05 and the default margin parameter "
        f"{margin:g} that is about {dims:,.0f} dimensions (for data of d = {d} dimensions the "
        f"projection would keep them all). The learner enumerates a net of the projected "
        f"ball, exponential in the dimension (at scale margin/10 about (30/margin)^{k} = "
        f"{(30 / margin) ** k:.2g} points in {k} dimensions), so it runs at dimension "
        f"{default.dimension} (the default); a random projection of the synthetic data (R^10, "
        "margin 0.1) to so few dimensions keeps little of the margin, and the error levels "
        "off whatever n. No enumerated net reaches the theorem's dimension at feasible "
        "cost."
    )


#: The network learner's practical regime, in words (its notes).
NEURAL_NET_NOTE = (
    "Practical regime (labelled 'practical: ...'): candidates=N random networks (weights "
    "uniform on the spheres of radius Lambda, drawn from a generator seeded by the "
    "learner's randomness before the data are read) instead of the enumerated cover, so "
    "the embedding dimension k and the width N need not stay at toy sizes. The candidates "
    "are scored a chunk at a time (memory about chunk x m x N doubles, 32 MiB per array "
    "whatever N is) and the selection is sampled by the streaming Gumbel-max, which keeps "
    "only the running maximum and is exactly the exponential mechanism (Durfee-Rogers 2019, "
    "Section 4). The privacy proof (the exponential mechanism over a data-independent "
    "finite set with a sensitivity-1/m score, McSherry-Talwar 2007 Theorem 6) holds for "
    "any such set: the same plan, epsilon-DP. Theorem 5.1's utility argument (a cover point "
    "near the comparator network) is not claimed for it."
)


#: The random-candidate regime's note (enumerating learners).
RANDOM_CANDIDATES_NOTE = (
    "Practical regime (labelled 'practical: ...'): the exponential mechanism runs over "
    "random points of the sphere drawn before the data are read (candidates=N) instead of "
    "the enumerated net, so the projection may keep the data's dimension. The privacy proof "
    "(the exponential mechanism over a data-independent finite set with a sensitivity-1/n "
    "score, McSherry-Talwar 2007 Theorem 6) holds for any such set, so the guarantee is "
    "unchanged (epsilon-DP, the same plan); the paper's utility argument (a net point near "
    "the target) is not claimed for it."
)


#: Why margin selection's defaults stay at the majority class on breast-cancer, and what
#: its practical regime changes.
SELECTION_NOTE = (
    "Margin selection's final exponential mechanism scores rho_j by its margin loss plus "
    "Appendix F's penalty Lambda r / (rho_j sqrt(m)); at m = 398 (breast-cancer) that term "
    "is 0.10, 0.20, 0.40 at rho = 1/2, 1/4, 1/8 (0.50 at rho = 0.1), larger than any "
    "difference of the losses, so the largest rho (1/2) wins and the model predicts the "
    "majority class (0.361). The standard margin bound's term, 2 Lambda r / (rho sqrt(m)) "
    "(Mohri-Rostamizadeh-Talwalkar 2018, Section 5.4), is 1.0 at rho = 0.1: "
    "vacuous, so no bound-derived penalty admits the small margins at this m. The practical regime "
    "(labelled 'practical: ...') scales the penalty by c = 0.1 (a tuned constant, not a "
    "bound) and uses the margin grid 0.2, 0.1, 0.05. Both are fixed before the data are "
    "read: the final score's sensitivity stays 1/m and the plan (grid exponential "
    "mechanisms at eps/(2 grid), one at eps/2, basic composition) is unchanged, "
    "epsilon-DP."
)


def kernel_notes(cls: Any, n: int) -> list[str]:
    """kernel-margin's notes: 001's feature count D at n, what was tried, the regime."""
    beta = 0.05
    paper_features = n * n * math.log(2 * n / beta)
    return [
        f"001 Algorithm 3 step 2 takes D = m^2 log(2m/beta) random Fourier features for m "
        f"samples: at m = {n:,}, beta = {beta:g} that is D = {paper_features:.3g} features "
        f"per example (the curves use the default D = {cls().features}). The privacy does "
        "not depend on D or the bandwidth (the feature map is drawn independently of the "
        "data), so both may be tuned without touching the proof. Tried on the synthetic "
        "data at n = 1000, epsilon = 0.9 (2 seeds each): bandwidth 0.5 / 1 / 2, D = 50 / "
        "200, JL dimension 3 / 10, rho 0.25 / 0.5 / 1, one or two runs: test errors "
        "0.38-0.58 against 0.5 for guessing with the earlier BST14 stand-in optimiser; "
        "with the default, Algorithm 4 (phased SGD, next note), bandwidth 0.5 / 1 / 2, "
        "D = 50 / 200, rho 0.25 / 1: 0.29-0.53. Neither learns reliably at this n: "
        "the privacy noise of those optimisers dominates. The practical regime below "
        "keeps D and the bandwidth free and replaces the optimiser.",
        phased_note(n, cls().repetitions),
        PRACTICAL_NOTE,
    ]


#: The practical regime: one run of 300 full-batch noisy GD steps, sigma calibrated by
#: the accountant (privacy: :mod:`mechanisms.calibrated_gd`; the JL projection and the
#: margin loss are 000's).
NOISY_SGD_REGIMES: dict[str, dict[str, Any]] = {
    "practical: full-batch GD, sigma calibrated by the accountant": {
        "optimizer": "calibrated",
        "repetitions": 1,
        "steps": 300,
    }
}


#: The practical regime: JL to m = 10 and 20,000 random unit vectors (drawn before the
#: data are read) in place of the gamma/10-net: Theorem 5's privacy proof holds for any
#: data-independent finite candidate set (see :class:`NetMarginLearner`).
NET_MARGIN_REGIMES: dict[str, dict[str, Any]] = {
    "practical: m 10, 20000 random candidates for the net": {
        "candidates": 20000,
        "dimension": 10,
    }
}


#: The practical regime: projection to k = 10, rho = 0.1 and 20,000 random points of
#: the sphere of radius 2 Lambda in place of the cover (privacy: the exponential
#: mechanism over a data-independent finite set, see :class:`PureLinearLearner`).
PURE_MARGIN_REGIMES: dict[str, dict[str, Any]] = {
    "practical: k 10, rho 0.1, 20000 random candidates for the cover": {
        "candidates": 20000,
        "dimension": 10,
        "rho": 0.1,
    }
}


#: The practical regime: Algorithm 2's projection (k = 20) and clipping, then one run of
#: 300 full-batch noisy GD steps on the rho-hinge loss (rho = 0.1), sigma calibrated by
#: the accountant (privacy: :mod:`mechanisms.calibrated_gd`; k and rho do not enter it
#: beyond the Lipschitz constant 2r/rho the calibration uses).
EFFICIENT_MARGIN_REGIMES: dict[str, dict[str, Any]] = {
    "practical: full-batch GD, sigma calibrated by the accountant, rho 0.1, k 20": {
        "optimizer": "calibrated",
        "repetitions": 1,
        "steps": 300,
        "rho": 0.1,
        "dimension": 20,
    }
}


#: The practical regime: D = 200 random Fourier features of bandwidth 0.7 (drawn
#: independently of the data: they do not enter privacy), projection to k = 50, then one
#: run of 300 full-batch noisy GD steps on the rho-hinge loss (rho = 0.1), sigma
#: calibrated by the accountant (privacy: :mod:`mechanisms.calibrated_gd`).
KERNEL_MARGIN_REGIMES: dict[str, dict[str, Any]] = {
    "practical: D 200, bandwidth 0.7, k 50, rho 0.1, calibrated full-batch GD": {
        "optimizer": "calibrated",
        "repetitions": 1,
        "steps": 300,
        "rho": 0.1,
        "features": 200,
        "dimension": 50,
        "bandwidth": 0.7,
    }
}


#: The practical regime: projection to k = 10 and 20,000 random candidates per margin
#: (as pure-margin's regime), the margin grid 0.2, 0.1, 0.05 and Appendix F's penalty
#: scaled by 0.1 (privacy: basic composition of exponential mechanisms over
#: data-independent finite sets; the grid and the penalty are fixed before the data are
#: read, so the final score's sensitivity stays 1/m: see :class:`MarginSelection`).
MARGIN_SELECTION_REGIMES: dict[str, dict[str, Any]] = {
    "practical: k 10, 20000 random candidates per margin, margins 0.2-0.05, penalty x 0.1": {
        "candidates": 20000,
        "dimension": 10,
        "largest_margin": 0.2,
        "penalty": 0.1,
    }
}


#: The practical regime: 50,000 random two-layer networks (k = 10, width 4, tanh(3 a),
#: weights on the spheres of radius Lambda = 1), rho = 0.05, drawn before the data are
#: read and streamed in memory-bounded chunks (privacy: the exponential mechanism over a
#: data-independent finite set, see :class:`NeuralNetLearner`; k, N, kappa and rho do not
#: enter it).  About 7 s a fit at n = 3000 on one core.
NEURAL_NET_REGIMES: dict[str, dict[str, Any]] = {
    "practical: k 10, width 4, kappa 3, rho 0.05, 50000 random networks": {
        "candidates": 50000,
        "dimension": 10,
        "width": 4,
        "kappa": 3.0,
        "rho": 0.05,
    }
}
