"""The report targets of this package: every mechanism of the catalogue (correct and broken),
and every privacy claim of the source documents, at one concrete parameter point each.

dpaudit finds them through the entry point ``mechanisms`` of the group
``dpaudit.report_targets`` (``pyproject.toml``), which names :func:`register`; see
:mod:`dpaudit.plugins`.

A catalogue mechanism's *declared plan* is the event its claim rests on (what its author
declares the code does): for a broken mechanism it is the plan the buggy code *claims*, so the
accountant agrees with the claim and only the audit of the real code can disagree.

A source-document target takes its plan and claim from :data:`dpaudit.verify.CLAIMS` and is
audited at :data:`CLAIM_INSTANCES` when the algorithm has an auditable form (a black box run
on a designed neighbouring pair, from its module; see ``_AUDITED``); a claim without one
carries the stated reason (``_NOT_AUDITED``), which its report and index line show.

Auditable forms fix the data-independent randomness (a JL projection, an embedding): privacy
holds for every value of it, so conditioning on one is a valid test.  Where an output is a
vector, the audit reads a post-processing of it (a projection on a designed direction), which
can only lower the epsilon it certifies.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit.report import Target, claim_target, register_target
from mechanisms.catalogue_report_targets import catalogue_target, float_target

__all__ = [
    "CLAIM_INSTANCES",
    "NO_FORM_YET",
    "THEOREM2_INSTANCE",
    "audit_status",
    "register",
    "theorem2_audited",
]


#: The concrete parameters each source-document claim is reported (and audited) at: toy
#: sizes, so that every audit runs in seconds (the audited code runs at exactly these).
CLAIM_INSTANCES: dict[str, dict[str, Any]] = {
    "004/lemma-a1": {"lambda": "1/10", "T": 10, "delta": "1/1000000"},
    "004/lemma-a1-small-lambda": {"lambda": "1/10", "T": 10, "delta": "1/1000000"},
    "004/theorem-4.4": {"epsilon": "99/100", "delta": "1/10000", "m": 1, "K": 1},
    "004/theorem-3.5": {"epsilon": "1/2", "delta": "1/1000000"},
    "000/theorem-5": {"epsilon": 1, "n": 8},
    "000/theorem-3": {"epsilon": 1, "delta": "1/100000", "n": 10},
    "001/theorem-3.1": {"epsilon": 1, "m": 8},
    "001/theorem-5.1": {"epsilon": 1, "m": 8},
    "001/label-dp": {"epsilon": 1, "m": 10},
    "001/margin-selection": {"epsilon": 1, "m": 8},
    "001/theorem-3.2": {"epsilon": 1, "delta": "1/100000", "m": 10},
    "001/lemma-3.1": {"epsilon": 1, "delta": "1/100000"},
    "003/lemma-7": {"gamma": "1/4", "n": 9, "n_prime": 2},
    "003/corollary-1": {"alpha": "1/5", "epsilon": "99/100", "n": 31, "n_prime": 1},
    "003/lemma-5": {"epsilon": 1, "n": 100, "n_prime": 10},
    "002/exponential-mechanism": {"epsilon": 1, "Delta": 1},
    "002/private-pac-learner": {"epsilon": 1},
}


def _pac() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.exponential_learner import (
        PrivatePACLearner,
        pac_neighbouring_pair,
        thresholds_on_grid,
    )

    return (
        lambda: PrivatePACLearner(thresholds_on_grid(8), 1.0),
        lambda: [pac_neighbouring_pair(8)],
    )


def _net_margin() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.halfspaces import NetMarginLearner, jl_matrix
    from mechanisms.synthetic_margin import margin_sample

    rng = np.random.default_rng(5)
    X, y, _ = margin_sample(8, 6, 0.5, rng)
    A = jl_matrix(2, 6, rng)
    y1 = y.copy()
    y1[-1] = -y1[-1]
    return (
        lambda: NetMarginLearner(1.0, 0.5, 2).selection_mechanism(A),
        lambda: [((X, y), (X, y1))],
    )


def _greedy_cover() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.decision_lists import (
        DPGreedyCover,
        greedy_cover_inverse_temperature,
        greedy_cover_neighbouring_pair,
    )

    eps_hat = greedy_cover_inverse_temperature(sympy.Rational(1, 2), sympy.Rational(1, 10**6))
    return (lambda: DPGreedyCover(eps_hat, 4), lambda: [greedy_cover_neighbouring_pair(4)])


def _set_cover() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.emcover import SetCoverMechanism, cover_neighbouring_pair

    return (
        lambda: SetCoverMechanism(sympy.Rational(1, 10), 10, 4),
        lambda: [cover_neighbouring_pair(4)],
    )


def _at(key: str, name: str) -> Any:
    """The exact value of parameter ``name`` of claim ``key``'s instance."""
    from dpaudit.numeric import exact

    return exact(CLAIM_INSTANCES[key][name], name)


def _label_flipped_last(n: int, d: int) -> tuple[Any, Any, Any, np.random.Generator]:
    """``n`` records of R^``d`` with margin 1/2 and the replace-one neighbour with the last
    label negated (every candidate that separates the last record moves its score by 1/n, in
    opposite directions for the two sides: the worst case of the EM analysis); and the
    generator, to draw the fixed projection from next."""
    from mechanisms.synthetic_margin import margin_sample

    rng = np.random.default_rng(5)
    X, y, _ = margin_sample(n, d, 0.5, rng)
    y1 = y.copy()
    y1[-1] = -y1[-1]
    return X, y, y1, rng


def _pure_linear() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.halfspaces import jl_matrix
    from mechanisms.margin import PureLinearLearner

    X, y, y1, rng = _label_flipped_last(int(_at("001/theorem-3.1", "m")), 6)
    Phi = jl_matrix(1, 6, rng)
    learner = PureLinearLearner(_at("001/theorem-3.1", "epsilon"), 0.25, 1)
    return lambda: learner.mechanism(Phi), lambda: [((X, y), (X, y1))]


def _neural_net() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.halfspaces import jl_matrix
    from mechanisms.margin import NeuralNetLearner

    X, y, y1, rng = _label_flipped_last(int(_at("001/theorem-5.1", "m")), 6)
    phi0 = jl_matrix(1, 6, rng)
    learner = NeuralNetLearner(_at("001/theorem-5.1", "epsilon"), 0.25, dimension=1)
    return lambda: learner.mechanism(phi0), lambda: [((X, y), (X, y1))]


def _label_dp() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.margin import LabelDPLearner
    from mechanisms.synthetic_margin import margin_sample

    rng = np.random.default_rng(7)
    X, y, w = margin_sample(int(_at("001/label-dp", "m")), 2, 0.05, rng)
    y1 = y.copy()
    j = int(np.argmin(np.abs(X @ w)))  # the label nearest the boundary flipped
    y1[j] = -y1[j]
    learner = LabelDPLearner(_at("001/label-dp", "epsilon"), 0.1)
    return learner.mechanism, lambda: [((X, y), (X, y1))]


def _margin_selection() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.halfspaces import jl_matrix
    from mechanisms.margin import MarginSelection

    X, y, y1, rng = _label_flipped_last(int(_at("001/margin-selection", "m")), 6)
    learner = MarginSelection(_at("001/margin-selection", "epsilon"), 4, 1, weight_radius=0.5)
    projections = [jl_matrix(1, 6, rng) for _ in range(learner.grid)]
    return lambda: learner.mechanism(projections), lambda: [((X, y), (X, y1))]


def _noisy_gd(key: str, size: str) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """000 Algorithm 1/3 (``key`` 000/theorem-3) or 001 Algorithm 2 (001/theorem-3.2, with
    the BST14 stand-in optimiser its claim's plan states) with
    a fixed projection to R^1 (the projected dimension is free: the plan does not depend on
    it, and one dimension concentrates the changed record's influence); the pair is
    :func:`mechanisms.halfspaces.single_record_pair` along the projection (n - 1 zero
    records, the last one's label negated); the output is <w, z> for the changed record's
    feature z."""
    from mechanisms.halfspaces import NoisyGDMarginLearner, jl_matrix, single_record_pair
    from mechanisms.margin import EfficientLinearLearner

    A = jl_matrix(1, 20, np.random.default_rng(5))
    pair = single_record_pair(int(_at(key, size)), A[0])
    direction = A @ pair[0][0][-1]  # in R^1 a positive multiple of the record's feature
    eps, delta = _at(key, "epsilon"), _at(key, "delta")
    learner: Any = (
        NoisyGDMarginLearner(eps, delta, 0.5, 1)
        if key == "000/theorem-3"
        else EfficientLinearLearner(eps, delta, 0.25, 1, optimizer="bst14")
    )
    return lambda: learner.mechanism(A, direction), lambda: [pair]


def _phased() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """001 Algorithm 2 with its default optimiser, Algorithm 4 as rebuilt
    (:mod:`mechanisms.phased_sgd`), on the pair of :func:`_noisy_gd` (m = 10, projection to
    R^1: 9 zero records and one unit record whose label is negated)."""
    from mechanisms.halfspaces import jl_matrix, single_record_pair
    from mechanisms.margin import EfficientLinearLearner

    A = jl_matrix(1, 20, np.random.default_rng(5))
    pair = single_record_pair(10, A[0])
    direction = A @ pair[0][0][-1]
    eps, delta = _at("001/lemma-3.1", "epsilon"), _at("001/lemma-3.1", "delta")
    learner = EfficientLinearLearner(eps, delta, 0.25, 1)
    return lambda: learner.mechanism(A, direction), lambda: [pair]


#: The query point the 003 prediction audits ask about.
_QUERY = (0.0, 0.3)


def _stable() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Lemma 7 at its instance on :func:`mechanisms.private_prediction.balanced_query_pair`
    (n copies of the query point, labels balanced, one flipped: the pair on which the
    selection moves the prediction most, by tanh(gamma/4) in total variation).  The claim is
    (0, 3 gamma): a positive certified epsilon at delta = 3 gamma would itself be a
    violation, so the shipped code certifies 0 there by construction; the audit's power is
    against code whose total variation exceeds 3 gamma (the tests show one caught)."""
    from mechanisms.private_prediction import StableLearner, balanced_query_pair

    learner = StableLearner(_at("003/lemma-7", "gamma"), int(_at("003/lemma-7", "n_prime")))
    pair = balanced_query_pair(int(_at("003/lemma-7", "n")), np.array(_QUERY))
    return lambda: learner.mechanism(np.array(_QUERY)), lambda: [pair]


def _flipped_stable() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Corollary 1 at its instance (EM privacy eps alpha / 6, n' = 1 <= eps alpha n / 6) on
    :func:`mechanisms.private_prediction.balanced_query_pair` (n copies of the query point,
    labels balanced, one label flipped): the exact loss of the pair is
    ln((alpha + (1 - 2 alpha) sigma(b)) / (alpha + (1 - 2 alpha) sigma(-b))), b = eps_EM / 2
    (0.0099 here): the EM at privacy <= 1/12 moves the prediction little, so the audit needs
    millions of samples (cheap: n' = 1 gives n distinct subsamples)."""
    from mechanisms.private_prediction import FlippedStableLearner, balanced_query_pair

    key = "003/corollary-1"
    alpha = _at(key, "alpha")
    learner = FlippedStableLearner(_at(key, "epsilon") * alpha / 6, int(_at(key, "n_prime")), alpha)
    pair = balanced_query_pair(int(_at(key, "n")), np.array(_QUERY))
    return lambda: learner.mechanism(np.array(_QUERY)), lambda: [pair]


def _subsampled_response() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.private_prediction import SubsampledResponse

    key = "003/lemma-5"
    mech = SubsampledResponse(_at(key, "epsilon"), int(_at(key, "n_prime")))
    return lambda: mech, lambda: [mech.pair(int(_at(key, "n")))]


def _winnow() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """DP-Winnow at Theorem 4.4's eps_hat and eta on one-example streams of dimension 4
    (:func:`mechanisms.winnow.winnow_neighbouring_pair`).  The AboveThreshold threshold is
    free (its privacy does not depend on it): set far below the query so that every run
    switches once, and the output is the sampled coordinate, whose law moves by ~2.5 eta
    between the pair."""
    from mechanisms.winnow import DPWinnow, DPWinnowParameters, winnow_neighbouring_pair

    key = "004/theorem-4.4"
    eps, delta = _at(key, "epsilon"), _at(key, "delta")
    m, k = int(_at(key, "m")), int(_at(key, "K"))
    log = sympy.log(2 / delta)
    params = DPWinnowParameters(  # Theorem 4.4's eps_hat and eta; one-example streams
        horizon=1,
        rho=0.5,
        epsilon_hat=float(eps / (4 * sympy.sqrt(2 * k * log))),
        eta=float(eps / (8 * sympy.sqrt(2 * m * k * log))),
        threshold=-1e6,
        samples=m,
        beta=0.1,
        switches=k,
        setting="Theorem 4.4",
    )
    return lambda: DPWinnow(4, params), lambda: [winnow_neighbouring_pair(4)]


#: 003 Theorem 2 at toy size: n records (odd, for the balanced pair), n' = 2 (Lemma 8 needs
#: n' >= 2), net radius eta, flip alpha, A^R with ``parts`` blocks.  Theorem 2 has no
#: registered claim (its privacy is O(eps) only asymptotically), so its target is a
#: reconstructed claim: the accountant's own bound for the plan at this point.
THEOREM2_INSTANCE: dict[str, Any] = {
    "n": 301,
    "n_prime": 2,
    "eta": "1/10",
    "alpha": "1/10",
    "parts": 100,
}


def theorem2_audited() -> tuple[Any, Any, Any]:
    """003 Theorem 2 at :data:`THEOREM2_INSTANCE`: the learner, its query point and the
    neighbouring pair :func:`mechanisms.private_prediction.balanced_query_pair` (n copies of
    the query point, labels balanced, one flipped).  Relabeling by the selected h erases the
    labels, so the pair moves only the selection (scores +-1 between h = +x and -x, log-odds
    2 beta = 2/(eta n)); A^R's vote (log-odds eps_R parts / 2 on unanimous votes) carries
    that shift to the answer, and the flip caps it.  Exact loss of the pair: ln(P / (1 - P)),
    P = alpha + (1 - 2 alpha)(sigma(2 beta) v + sigma(-2 beta)(1 - v)), beta = 1/(eta n),
    v = sigma(eps_R parts / 2), eps_R = 1/(eta n) -- 0.036 here, against the accountant's
    0.592.  A selection run with a
    too-large privacy parameter (less noise) moves the answer almost by the vote's accuracy:
    the pair catches it (tests/mechanisms/learners/test_theorem2_audit.py)."""
    from mechanisms.private_prediction import Theorem2Learner, balanced_query_pair

    p = THEOREM2_INSTANCE
    learner = Theorem2Learner(
        int(p["n_prime"]), _exact(p["eta"], "eta"), _exact(p["alpha"], "alpha"), int(p["parts"])
    )
    return learner, np.array(_QUERY), balanced_query_pair(int(p["n"]), np.array(_QUERY))


def _exact(value: Any, name: str) -> Any:
    from dpaudit.numeric import exact

    return exact(value, name)


def _theorem2_target() -> Target:
    """003 Theorem 2 as a report target without a source claim (a reconstructed one: the
    claimed epsilon is the accountant's explicit-constant Lemma 8 bound, then the label-flip
    rule, for :meth:`Theorem2Learner.plan` at :data:`THEOREM2_INSTANCE`, rounded up)."""
    from dpaudit.accountant import Accountant

    learner, q, pair = theorem2_audited()
    plan = learner.plan(int(THEOREM2_INSTANCE["n"]))
    epsilon = Accountant().guarantee(plan).epsilon_upper
    return Target(
        name="003/theorem-2",
        title="003 Dagan, Feldman 2020: Theorem 2 (reconstructed claim)",
        group="source documents",
        epsilon=float(epsilon),
        delta=0.0,
        summary=(
            "subsample n' records, exponential mechanism with privacy 2/(eta n) over "
            "H_{S_I}, relabel S by the selection, realizable learner A^R with "
            "1/(eta n)-private prediction, flip with probability alpha.  003 states "
            "O(eps)-private prediction asymptotically, with no constants: the claim "
            "audited here is reconstructed, the accountant's explicit-constant Lemma 8 "
            "bound then the label-flip rule at the stated instance"
        ),
        plan=plan,
        parameters=dict(THEOREM2_INSTANCE),
        mechanism=lambda: learner.mechanism(q),
        pairs=lambda: [pair],
        samples=100_000,
        source=(
            "mechanisms.private_prediction:Theorem2Learner.mechanism (the prediction at "
            "x = (0, 0.3); pair: 301 records at x, labels balanced, one flipped; n' = 2, "
            "eta = 1/10, alpha = 1/10, A^R with 100 blocks)"
        ),
    )


#: Audited forms of the source-document claims: (builder, samples, what is audited).
_AUDITED: dict[str, tuple[Callable[[], tuple[Callable[[], Any], Callable[[], Any]]], int, str]] = {
    "002/private-pac-learner": (
        _pac,
        200_000,
        "mechanisms.exponential_learner:PrivatePACLearner over thresholds on a grid of 8",
    ),
    "002/exponential-mechanism": (
        _pac,
        200_000,
        "mechanisms.exponential_learner:PrivatePACLearner (the exponential mechanism, Delta = 1)",
    ),
    "000/theorem-5": (
        _net_margin,
        100_000,
        "mechanisms.halfspaces:NetMarginLearner."
        "selection_mechanism (fixed JL projection, n = 8, m = 2)",
    ),
    "004/theorem-3.5": (
        _greedy_cover,
        20_000,
        "mechanisms.decision_lists:DPGreedyCover (M = 4 features)",
    ),
    "004/lemma-a1": (
        _set_cover,
        20_000,
        "mechanisms.emcover:SetCoverMechanism (4 sets, T = 10 rounds)",
    ),
    "004/lemma-a1-small-lambda": (
        _set_cover,
        20_000,
        "mechanisms.emcover:SetCoverMechanism (4 sets, T = 10 rounds)",
    ),
    "004/theorem-4.4": (
        _winnow,
        160_000,
        "mechanisms.winnow:DPWinnow (d = 4, one-example "
        "streams, Theorem 4.4's eps_hat and eta, AboveThreshold threshold "
        "-10^6: every run switches once)",
    ),
    "001/theorem-3.1": (
        _pure_linear,
        100_000,
        "mechanisms.margin:PureLinearLearner.mechanism "
        "(fixed projection to R^1, rho = 1/4: a 41-point cover)",
    ),
    "001/theorem-5.1": (
        _neural_net,
        100_000,
        "mechanisms.margin:NeuralNetLearner.mechanism "
        "(fixed embedding to R^1, width 2, cover scale 1/2: 169 networks)",
    ),
    "001/label-dp": (
        _label_dp,
        100_000,
        "mechanisms.margin:LabelDPLearner.mechanism (the label nearest the boundary flipped)",
    ),
    "001/margin-selection": (
        _margin_selection,
        20_000,
        "mechanisms.margin:MarginSelection."
        "mechanism (4 margins, fixed projections to R^1, Lambda = 1/2; "
        "output: the selected model)",
    ),
    "000/theorem-3": (
        functools.partial(_noisy_gd, "000/theorem-3", "n"),
        20_000,
        "mechanisms.halfspaces:NoisyGDMarginLearner.mechanism (fixed projection "
        "to R^1, 3 runs of n^2 = 100 steps; pair: 9 zero records and one unit "
        "record whose label is negated; output <w, z> for its projection z)",
    ),
    "001/theorem-3.2": (
        functools.partial(_noisy_gd, "001/theorem-3.2", "m"),
        30_000,
        "mechanisms.margin:EfficientLinearLearner.mechanism (fixed projection "
        "to R^1, 2 runs of m^2 = 100 steps; pair: 9 zero records and one unit "
        "record whose label is negated; output <w, Phi x> for it)",
    ),
    "001/lemma-3.1": (
        _phased,
        30_000,
        "mechanisms.margin:EfficientLinearLearner.mechanism (Algorithm 4 as rebuilt: "
        "mechanisms.phased_sgd; fixed projection to R^1, 2 runs of 3 phases + EM; pair: "
        "9 zero records and one unit record whose label is negated; output <w, Phi x> for it)",
    ),
    "003/lemma-7": (
        _stable,
        50_000,
        "mechanisms.private_prediction:StableLearner.mechanism "
        "(the prediction at x = (0, 0.3); pair: 9 records at x, labels balanced, "
        "one flipped; audited as (0, 3 gamma)-DP: it can only flag a total "
        "variation above 3 gamma, so a correct run certifies 0)",
    ),
    "003/corollary-1": (
        _flipped_stable,
        3_000_000,
        "mechanisms.private_prediction:"
        "FlippedStableLearner.mechanism (the prediction at x = (0, 0.3); pair: "
        "31 records at x, labels balanced, one label flipped)",
    ),
    "003/lemma-5": (
        _subsampled_response,
        200_000,
        "mechanisms.private_prediction:"
        "SubsampledResponse (Lemma 5's eps-DP algorithm instantiated as randomized "
        "response on 'the subsample holds a 1'; the pair: all zeros vs one 1)",
    ),
}


#: Source-document claims that cannot be audited, with the reason (shown in the report and
#: in its index line).  Every claim of the source documents has an auditable form today.
_NOT_AUDITED: dict[str, str] = {}

#: The reason given for a claim registered without an entry in either table.
NO_FORM_YET = (
    "no auditable form is wired for this claim yet (add one to _AUDITED in "
    "mechanisms/report_targets.py, or its reason to _NOT_AUDITED)"
)


def audit_status(key: str) -> tuple[str, str]:
    """``("audited", what is audited)`` or ``("not audited", why)`` for a claim key."""
    if key in _AUDITED:
        return "audited", _AUDITED[key][2]
    return "not audited", _NOT_AUDITED.get(key, NO_FORM_YET)


def _claim_target(key: str) -> Target:
    if key in _AUDITED:
        builder, samples, source = _AUDITED[key]
        mechanism, pairs = builder()
        return claim_target(
            key,
            CLAIM_INSTANCES.get(key, {}),
            mechanism=mechanism,
            pairs=pairs,
            samples=samples,
            source=source,
        )
    return claim_target(key, CLAIM_INSTANCES.get(key, {}), not_audited=audit_status(key)[1])


def register() -> list[Target]:
    """Register (and return) this package's targets: the source documents' claims (after
    :func:`dpaudit.verify.load_claim_modules`), then the catalogue, then the broken
    mechanisms, then the floating-point entries (:mod:`mechanisms.floating_point`, group
    ``floating point``), then the training algorithms audited by one run
    (:func:`mechanisms.one_run_report_targets.one_run_targets`).  The entry point of the
    group ``dpaudit.report_targets``."""
    from dpaudit.verify import CLAIMS, load_claim_modules
    from mechanisms.broken import broken_mechanisms
    from mechanisms.catalogue import correct_mechanisms
    from mechanisms.floating_point import float_broken_mechanisms, float_safe_mechanisms
    from mechanisms.one_run_report_targets import one_run_targets

    failed = [f"{m.module}: {m.detail}" for m in load_claim_modules() if m.status == "error"]
    if failed:  # a claim whose module failed would silently lose its report
        raise RuntimeError(f"claim modules failed to import: {'; '.join(failed)}")
    out = [register_target(_claim_target(key)) for key in sorted(CLAIMS)]
    out.append(register_target(_theorem2_target()))
    out += [register_target(catalogue_target(m, "catalogue")) for m in correct_mechanisms()]
    out += [register_target(catalogue_target(m, "broken")) for m in broken_mechanisms()]
    out += [
        register_target(float_target(m))
        for m in float_broken_mechanisms() + float_safe_mechanisms()
    ]
    out += [register_target(t) for t in one_run_targets()]
    return out
