"""The regimes of the halfspace learners (:mod:`mechanisms.estimators.halfspace`,
:mod:`mechanisms.estimators.halfspace_selection`) and their learning-curve notes.

Per learner, ``*_DEFAULTS`` maps each regime (``"practical"``, the default, and ``"paper"``)
to the values of the parameters left at None, and ``*_TUNED`` says for each tuned constant
why the learner's privacy proof does not depend on it (or how the accountant certifies it).
Every practical value is fixed before the data are read: a number or a :class:`Rule` of the
training set's shape (n rows, d features).  The notes state why the papers' parameters do
not learn at practical n, in the papers' own numbers."""

from __future__ import annotations

import math
from typing import Any

from mechanisms.estimators.regimes import Rule

__all__ = [
    "AUTO_STEPS",
    "EFFICIENT_MARGIN_DEFAULTS",
    "EFFICIENT_MARGIN_TUNED",
    "GD_PEER_NOTE",
    "KERNEL_MARGIN_DEFAULTS",
    "KERNEL_MARGIN_TUNED",
    "LABEL_DP_DEFAULTS",
    "LABEL_DP_TUNED",
    "MARGIN_SELECTION_DEFAULTS",
    "MARGIN_SELECTION_TUNED",
    "NET_MARGIN_DEFAULTS",
    "NET_MARGIN_TUNED",
    "NEURAL_NET_DEFAULTS",
    "NEURAL_NET_NOTE",
    "NEURAL_NET_TUNED",
    "NOISY_SGD_DEFAULTS",
    "NOISY_SGD_TUNED",
    "PRACTICAL_NOTE",
    "PURE_MARGIN_DEFAULTS",
    "PURE_MARGIN_TUNED",
    "RANDOM_CANDIDATES_NOTE",
    "ROUNDS",
    "SELECTION_NOTE",
    "SELECTION_PEER_NOTE",
    "STEPS",
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
        f"({repetitions} runs); the paper regime uses steps='auto', min(n^2, {AUTO_STEPS:,}) steps "
        "with the papers' noise scale sigma kept (calibrated for n^2 steps), so the privacy "
        "proof holds and the run spends less than the papers' budget (the accounted epsilon "
        "in the tables). Fewer steps at the same sigma also average less noise away: at "
        "these n BST14's noise dominates every step, the learned w is close to a random "
        "direction, and a random halfspace errs with probability 1/2 on any data (w and -w "
        "are equally likely), above the majority-class error of unbalanced data such as "
        "breast-cancer's -- not a labelling bug (the defaults, next note, run the same "
        "feature map, labels and decision function and learn)."
    )


#: The practical regime's note (noisy-SGD learners).
PRACTICAL_NOTE = (
    "The defaults (regime='practical'): optimizer='calibrated', full-batch noisy "
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
        "The paper regime: 001 Algorithm 2 step 4 runs Algorithm 4 (phased SGD + confidence "
        f"boosting, reconstructed: mechanisms.phased_sgd): {n.bit_length() - 1} phases on disjoint "
        f"halving batches, {n - 1:,} gradient steps per run at most ({repetitions} runs), "
        "Gaussian noise on each phase's average iterate calibrated to the stability "
        "sensitivity 2 L eta_i; optimizer='bst14' runs the earlier BST14 stand-in instead. "
        "Both stay noise-dominated at these n: a noise-dominated w is close to a random "
        "direction, whose expected error is 1/2 on any data, above the majority-class error "
        "of unbalanced data (breast-cancer)."
    )


def projection_note(n: int, d: int, doc: str, formula: str, margin: float, dimension: int) -> str:
    """Why an enumerating learner's paper regime levels off: the projected dimension its
    theorem asks for (alpha = 0.1, beta = 0.05, the O(.)'s constant taken as 1) against the
    one it runs at (``dimension``, at the paper regime's ``margin``)."""
    if doc == "000":
        dims = math.log(n / (0.1 * 0.05)) / margin**2
    else:
        dims = math.log(n / 0.05) / margin**2
    k = min(d, math.ceil(dims))
    return (
        f"{doc} projects to {formula} dimensions; with the O(.)'s constant taken as 1, at "
        f"n = {n:,}, alpha = 0.1, beta = 0.05 and the paper regime's margin parameter "
        f"{margin:g} that is about {dims:,.0f} dimensions (for data of d = {d} dimensions the "
        f"projection would keep them all). The learner enumerates a net of the projected "
        f"ball, exponential in the dimension (at scale margin/10 about (30/margin)^{k} = "
        f"{(30 / margin) ** k:.2g} points in {k} dimensions), so the paper regime runs at "
        f"dimension {dimension}; a random projection of the synthetic data (margin 0.1) to so "
        "few dimensions keeps little of the margin, and the error levels off whatever n. No "
        "enumerated net reaches the theorem's dimension at feasible cost."
    )


#: The network learner's practical regime, in words (its notes).
NEURAL_NET_NOTE = (
    "The defaults (regime='practical'): candidates=N random networks per round (weights "
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
    "The defaults (regime='practical') run the exponential mechanism over random points of "
    "the sphere drawn before the data are read, localised over rounds "
    "(mechanisms.localised_selection): round 1 draws N = 2000 candidates uniformly, each later "
    "round N near the previous round's released choice (a cap of 1 rad, shrinking by 0.7 a "
    "round; n // 250 rounds, between 1 and 8), and "
    "round r scores its candidates on its own part of a data-independent partition of the "
    "rows. Each round is the exponential mechanism over a finite set fixed given earlier "
    "outputs, with a sensitivity-1/n_r score (McSherry-Talwar 2007 Theorem 6), and a record "
    "lies in one part only: adaptive parallel composition, epsilon-DP, the plan a Parallel of "
    "the rounds' Exponential events. With one round it is the paper's plan. The projection "
    "keeps the data's dimension; the paper's utility argument (a net point near the target) "
    "is not claimed for it."
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
    "vacuous, so no bound-derived penalty admits the small margins at this m. The defaults "
    "(regime='practical') scale the penalty by c = 0.1 (a tuned constant, not a "
    "bound) and uses the margin grid 0.2, 0.1, 0.05. Both are fixed before the data are "
    "read: the final score's sensitivity stays 1/m and the plan (grid exponential "
    "mechanisms at eps/(2 grid), one at eps/2, basic composition) is unchanged, "
    "epsilon-DP."
)


def kernel_notes(n: int) -> list[str]:
    """kernel-margin's notes: 001's feature count D at n, what was tried, the defaults."""
    beta = 0.05
    paper_features = n * n * math.log(2 * n / beta)
    return [
        f"001 Algorithm 3 step 2 takes D = m^2 log(2m/beta) random Fourier features for m "
        f"samples: at m = {n:,}, beta = {beta:g} that is D = {paper_features:.3g} features "
        "per example (the paper regime uses D = 50). The privacy does not depend on D or the "
        "bandwidth (the feature map is drawn independently of the data), so both may be "
        "tuned without touching the proof. With the paper regime's optimiser, Algorithm 4 "
        "(phased SGD, next note), bandwidth 0.5 / 1 / 2, D = 50 / 200, rho 0.25 / 1: test "
        "errors 0.29-0.53 at n = 1000, epsilon = 0.9: its privacy noise dominates. The "
        "defaults keep D and the bandwidth free and replace the optimiser.",
        phased_note(n, 2),
        PRACTICAL_NOTE,
    ]


# ---- the regimes --------------------------------------------------------------------------


def _rounds(n: int, d: int) -> int:
    """Localisation rounds for n rows: one per 250 rows, between 1 and 8 (each round's part
    keeps at least 250 rows, so its exponential mechanism still discriminates)."""
    return max(1, min(8, n // 250))


#: The practical regimes' number of localisation rounds (a function of n only).
ROUNDS = Rule("n // 250, between 1 and 8", _rounds)


def _steps(n: int, d: int) -> int:
    """Full-batch steps for n rows: 10^5 // n between 50 and 300 (small n: more steps average
    more of the noise away; large n: the noise is small and a step costs O(n d))."""
    return max(50, min(300, 100_000 // n))


#: The calibrated optimiser's number of full-batch steps (a function of n only).
STEPS = Rule("10^5 // n, between 50 and 300", _steps)

#: Why localisation keeps the selection learners' proofs (their TUNED entries).
_LOCALISED = (
    "rounds of the exponential mechanism over candidates drawn from the learner's randomness "
    "and the earlier rounds' released choices only, each round on its own part of a "
    "data-independent partition of the rows: adaptive parallel composition of "
    "epsilon-DP exponential mechanisms (McSherry-Talwar 2007 Theorem 6; McSherry 2009 "
    "Theorem 4), epsilon-DP for every number of candidates, rounds and cap schedule "
    "(mechanisms.localised_selection)"
)
_CALIBRATED = (
    "full-batch noisy projected GD whose sigma the accountant calibrates to the requested "
    "(epsilon, delta): T Gaussian steps of sensitivity 2L/n compose to one Gaussian of "
    "sensitivity sqrt(T) 2L/n (Dong-Roth-Su 2019 Cor. 3.3; Balle-Wang 2018 Thm 8), for every "
    "T and every Lipschitz loss (mechanisms.calibrated_gd)"
)
_CAPS = "the caps' angular radii (1 rad, then x 0.7 a round): fixed in advance"
_IDENTITY = (
    "'identity': no projection (a fixed linear map, like the data-independent JL matrix the "
    "paper draws; applied record by record, so neighbours stay neighbours)"
)

#: 000 Algorithm 1/3 (noisy-sgd-margin).
NOISY_SGD_DEFAULTS: dict[str, dict[str, Any]] = {
    "practical": {
        "optimizer": "calibrated",
        "repetitions": 1,
        "steps": STEPS,
        "dimension": "identity",
        "margin": 0.1,
    },
    "paper": {
        "optimizer": "bst14",
        "repetitions": 3,
        "steps": "auto",
        "dimension": 10,
        "margin": 0.1,
    },
}
NOISY_SGD_TUNED: dict[str, str] = {
    "optimizer": _CALIBRATED,
    "repetitions": "one run, so no confidence-boosting selection is needed (R > 1 adds the "
    "exponential mechanism over the runs to the calibrated plan)",
    "steps": "10^5 // n steps between 50 and 300: sigma is calibrated for the steps that run",
    "dimension": _IDENTITY,
    "margin": "the loss's margin gamma fixes its Lipschitz constant 100/(86 gamma), which "
    "the calibration uses: any gamma keeps the proof",
}

#: 000 Algorithm 2 (net-margin).
NET_MARGIN_DEFAULTS: dict[str, dict[str, Any]] = {
    "practical": {
        "candidates": 2000,
        "rounds": ROUNDS,
        "first_angle": 1.0,
        "shrink": 0.7,
        "dimension": "identity",
        "margin": 0.3,
    },
    "paper": {
        "candidates": "net",
        "rounds": 1,
        "first_angle": 1.0,
        "shrink": 0.5,
        "dimension": 2,
        "margin": 0.3,
    },
}
NET_MARGIN_TUNED: dict[str, str] = {
    "candidates": "2000 random unit vectors per round instead of the gamma/10-net: "
    "Theorem 5's proof needs only a finite set fixed independently of the data",
    "rounds": _LOCALISED,
    "first_angle, shrink": _CAPS,
    "dimension": _IDENTITY,
    "margin": "gamma = 0.3 (the paper regime's) sets the utility's threshold gamma/10; the "
    "score's sensitivity is 1/n (a fraction of the rows) for every gamma",
}

#: 001 Algorithm 1 (pure-margin).
PURE_MARGIN_DEFAULTS: dict[str, dict[str, Any]] = {
    "practical": {
        "candidates": 2000,
        "rounds": ROUNDS,
        "first_angle": 1.0,
        "shrink": 0.7,
        "dimension": "identity",
        "rho": 0.05,
    },
    "paper": {
        "candidates": "net",
        "rounds": 1,
        "first_angle": 1.0,
        "shrink": 0.5,
        "dimension": 2,
        "rho": 0.25,
    },
}
PURE_MARGIN_TUNED: dict[str, str] = {
    "candidates": "2000 random points of the sphere of radius 2 Lambda per round instead of "
    "the rho/(10 r)-cover: Theorem 3.1's privacy part needs only a finite set fixed "
    "independently of the data",
    "rounds": _LOCALISED,
    "first_angle, shrink": _CAPS,
    "dimension": _IDENTITY,
    "rho": "the margin of the rho-margin loss (a fraction of the rows, sensitivity 1/m for "
    "every rho)",
}

#: 001 Algorithm 2 (efficient-margin).
EFFICIENT_MARGIN_DEFAULTS: dict[str, dict[str, Any]] = {
    "practical": {
        "optimizer": "calibrated",
        "repetitions": 1,
        "steps": STEPS,
        "dimension": "identity",
        "rho": 0.1,
    },
    "paper": {
        "optimizer": "phased",
        "repetitions": 2,
        "steps": "auto",
        "dimension": 10,
        "rho": 0.25,
    },
}
EFFICIENT_MARGIN_TUNED: dict[str, str] = {
    "optimizer": _CALIBRATED,
    "repetitions": "one run (no selection among runs)",
    "steps": "10^5 // n steps between 50 and 300: sigma is calibrated for the steps that run",
    "dimension": _IDENTITY,
    "rho": "enters only through the hinge's Lipschitz constant 2r/rho, which the calibration uses",
}

#: 001 Algorithm 3 (kernel-margin).
KERNEL_MARGIN_DEFAULTS: dict[str, dict[str, Any]] = {
    "practical": {
        "optimizer": "calibrated",
        "repetitions": 1,
        "steps": STEPS,
        "features": 200,
        "bandwidth": 2.0,
        "dimension": "identity",
        "rho": 0.05,
    },
    "paper": {
        "optimizer": "phased",
        "repetitions": 2,
        "steps": "auto",
        "features": 50,
        "bandwidth": 0.5,
        "dimension": 10,
        "rho": 0.25,
    },
}
KERNEL_MARGIN_TUNED: dict[str, str] = {
    **EFFICIENT_MARGIN_TUNED,
    "features": "D random Fourier features drawn independently of the data (a record-wise "
    "map): the privacy does not depend on D",
    "bandwidth": "the kernel's width, part of the same data-independent feature map",
}

#: 001 Appendix E (label-dp-margin).
LABEL_DP_DEFAULTS: dict[str, dict[str, Any]] = {
    "practical": {
        "candidates": 2000,
        "rounds": ROUNDS,
        "first_angle": 1.0,
        "shrink": 0.7,
        "rho": 0.05,
    },
    "paper": {
        "candidates": "labelings",
        "rounds": 1,
        "first_angle": 1.0,
        "shrink": 0.5,
        "rho": 0.1,
    },
}
LABEL_DP_TUNED: dict[str, str] = {
    "candidates": "2000 random halfspaces of R^d per round, drawn without reading the labels "
    "(the labelings of d > 2 features are O(m^d) candidates)",
    "rounds": _LOCALISED + "; with one label changed instead of one record",
    "first_angle, shrink": _CAPS,
    "rho": "the margin of the rho-margin loss (sensitivity 1/m for every rho)",
}

#: 001 Appendix F (margin-selection).
MARGIN_SELECTION_DEFAULTS: dict[str, dict[str, Any]] = {
    "practical": {
        "candidates": 2000,
        "rounds": ROUNDS,
        "first_angle": 1.0,
        "shrink": 0.7,
        "dimension": "identity",
        "largest_margin": 0.2,
        "penalty": 0.1,
        "selection_share": 0.1,
    },
    "paper": {
        "candidates": "net",
        "rounds": 1,
        "first_angle": 1.0,
        "shrink": 0.5,
        "dimension": 2,
        "largest_margin": 0.5,
        "penalty": 1.0,
        "selection_share": 0.5,
    },
}
MARGIN_SELECTION_TUNED: dict[str, str] = {
    "candidates, rounds": "each margin's Algorithm 1 over localised random candidates "
    "(pure-margin's defaults): " + _LOCALISED,
    "first_angle, shrink": _CAPS,
    "dimension": _IDENTITY,
    "largest_margin": "the margin grid 0.2, 0.1, 0.05 (Appendix F's is 1/2, 1/4, 1/8): "
    "fixed before the data are read, so the final score's sensitivity stays 1/m",
    "penalty": "Appendix F's complexity term times 0.1: a function of j, m, Lambda, r only "
    "(data-independent), so the final score's sensitivity stays 1/m (a tuned constant, not "
    "a bound)",
    "selection_share": "the final selection at 0.1 epsilon and each margin's learner at "
    "0.3 epsilon: basic composition still sums to epsilon (Dwork-Roth 2014 Thm 3.16) for "
    "every share in (0, 1)",
}

#: 001 Section 5 (neural-net-margin).
NEURAL_NET_DEFAULTS: dict[str, dict[str, Any]] = {
    "practical": {
        "candidates": 1000,
        "rounds": ROUNDS,
        "first_angle": 1.0,
        "shrink": 0.7,
        "dimension": 40,
        "width": 2,
        "kappa": 3.0,
        "rho": 0.05,
    },
    "paper": {
        "candidates": "net",
        "rounds": 1,
        "first_angle": 1.0,
        "shrink": 0.5,
        "dimension": 2,
        "width": 2,
        "kappa": 1.0,
        "rho": 0.1,
    },
}
NEURAL_NET_TUNED: dict[str, str] = {
    "candidates, rounds": "1000 random networks per round (weights on the spheres of radius "
    "Lambda) instead of the cover, localised: " + _LOCALISED,
    "first_angle, shrink": _CAPS,
    "dimension, width, kappa": "the embedding k = 40, width 2, tanh(3 a): the network "
    "architecture, fixed before the data are read (k = 40 is well conditioned for d up to "
    "about 20 and small enough to search at n of a few thousand)",
    "rho": "the margin of the rho-margin loss (sensitivity 1/m for every rho)",
}


#: Why the learners may trail diffprivlib's LogisticRegression (their ``PEER_NOTE``).
GD_PEER_NOTE = (
    "it adds Gaussian noise at each of T full-batch steps of a margin (hinge) loss built for "
    "separable data, calibrated to (epsilon, delta) over all T steps, where objective "
    "perturbation adds one noise vector to a smooth, regularised logistic objective; on data "
    "not separable with a margin the margin loss is the worse surrogate"
)
SELECTION_PEER_NOTE = (
    "it selects among finitely many random candidates, localised over rounds that each see "
    "only their own part of the rows: the direction it returns is no finer than the last "
    "round's cap, and random search converges slowly in high dimension (d = 64-100), where "
    "objective perturbation optimises on all rows at once with noise shrinking as "
    "1/(n epsilon)"
)
