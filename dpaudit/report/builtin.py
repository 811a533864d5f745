"""The built-in report targets: every mechanism of the catalogue (correct and broken), and
every privacy claim of the source documents, at one concrete parameter point each.

A catalogue mechanism's *declared plan* is the event its claim rests on (what its author
declares the code does): for a broken mechanism it is the plan the buggy code *claims*, so the
accountant agrees with the claim and only the audit of the real code can disagree.

A source-document target takes its plan and claim from :data:`dpaudit.verify.CLAIMS`; where
the algorithm has an auditable form and a stressing neighbouring pair (from its module), the
report audits it at the listed parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

import dpaudit.events as ev
from dpaudit.report.target import Target, register_target

__all__ = ["CLAIM_INSTANCES", "load_builtin_targets"]

#: Samples per dataset for the catalogue audits (sparse-vector outputs are 10-dimensional
#: and their event search is slower, so they get fewer).
CATALOGUE_SAMPLES = 200_000
SVT_SAMPLES = 40_000

#: The concrete parameters each source-document claim is reported (and audited) at.
CLAIM_INSTANCES: dict[str, dict[str, Any]] = {
    "004/lemma-a1": {"lambda": "1/10", "T": 10, "delta": "1/1000000"},
    "004/lemma-a1-small-lambda": {"lambda": "1/10", "T": 10, "delta": "1/1000000"},
    "004/theorem-4.4": {"epsilon": "1/2", "delta": "1/1000000", "m": 4, "K": 2},
    "004/theorem-3.5": {"epsilon": "1/2", "delta": "1/1000000"},
    "000/theorem-5": {"epsilon": 1, "n": 8},
    "000/theorem-3": {"epsilon": 1, "delta": "1/100000", "n": 100},
    "001/theorem-3.1": {"epsilon": 1, "m": 8},
    "001/theorem-5.1": {"epsilon": 1, "m": 8},
    "001/label-dp": {"epsilon": 1, "m": 8},
    "001/margin-selection": {"epsilon": 1, "m": 8},
    "001/theorem-3.2": {"epsilon": 1, "delta": "1/100000", "m": 100},
    "003/lemma-7": {"gamma": "1/4", "n": 100, "n_prime": 20},
    "003/corollary-1": {"alpha": "1/4", "epsilon": "1/2", "n": 1000, "n_prime": 20},
    "003/lemma-5": {"epsilon": 1, "n": 100, "n_prime": 10},
    "002/exponential-mechanism": {"epsilon": 1, "Delta": 1},
    "002/private-pac-learner": {"epsilon": 1},
}


def _declared_plan(m: Any) -> ev.Event:
    """The event a catalogue mechanism's claim rests on (see the module docstring)."""
    from mechanisms import broken as b
    from mechanisms import catalogue as c

    eps = sympy.nsimplify(m.epsilon)
    if isinstance(m, (b.BrokenLaplaceTooLittleNoise, b.BrokenLaplaceWrongSensitivity)):
        return ev.Laplace(1 / eps, 1)  # declared: sensitivity 1, scale 1/eps
    if isinstance(m, b.BrokenHistogramWrongSensitivity):
        return ev.Laplace(1 / eps, 1, relation=ev.Relation.REPLACE_ONE)  # declared L1 sens. 1
    if isinstance(m, c.LaplaceCount):
        return ev.Laplace(sympy.nsimplify(m.scale), sympy.nsimplify(m.record_bound))
    if isinstance(m, c.LaplaceHistogram):
        return ev.Laplace(sympy.nsimplify(m.scale), 2, relation=ev.Relation.REPLACE_ONE)
    if isinstance(m, c.GaussianSum):  # the broken one declares the clipped sensitivity too
        return ev.Gaussian(m.sigma, sympy.nsimplify(m.clip))
    if isinstance(m, b.BrokenNoisyMaxWrongNoiseScale):
        return ev.Exponential(eps)  # declared: exp(eps q / 2), the code uses exp(eps q)
    if isinstance(m, c.ReportNoisyMax):  # the value-releasing variants declare the index
        return ev.ReportNoisyMax(eps, noise=m.noise)
    if isinstance(m, c.ExponentialMechanism):
        return ev.Exponential(eps)
    if isinstance(m, c.RandomizedResponse):
        return ev.RandomizedResponse(eps)
    if isinstance(m, b.BrokenSparseVectorLeeClifton2014):
        return ev.AboveThreshold(eps, threshold_share="1/4")
    if isinstance(m, c.SparseVector):
        return ev.AboveThreshold(eps, cutoff=m.cutoff)
    if isinstance(m, c.AuditableMechanism) and type(m).__name__.startswith(
            "BrokenSparseVector"):
        return ev.AboveThreshold(eps)  # declared as sparse vector with cutoff 1
    raise ValueError(f"no declared plan is known for {m!r}")


def _slug(name: str) -> str:
    out = []
    for i, ch in enumerate(name.replace("[", "-").replace("]", "")):
        if ch.isupper() and i and name[i - 1].islower():
            out.append("-")
        out.append(ch.lower())
    return "".join(out).strip("-")


def _catalogue_target(m: Any, group: str) -> Target:
    samples = SVT_SAMPLES if "SparseVector" in type(m).__name__ else CATALOGUE_SAMPLES
    doc = (type(m).__doc__ or "").strip()
    summary = " ".join(doc.split("\n\n")[0].split())
    wrong = [p for p in doc.split("\n\n") if "What is wrong" in p]
    if wrong:
        summary += " " + " ".join(wrong[0].split())
    pairs = tuple(m.pairs)
    return Target(
        name=f"{group}/{_slug(m.name)}", title=m.name, group=group,
        epsilon=float(m.epsilon), delta=float(m.delta), summary=summary,
        plan=_declared_plan(m), mechanism=lambda: m, pairs=lambda: pairs, samples=samples,
        true_epsilon=m.true_epsilon, expect="broken" if group == "broken" else "private",
        source=f"{type(m).__module__}:{type(m).__qualname__}",
    )


def _pac() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.exponential_learner import (
        PrivatePACLearner,
        pac_neighbouring_pair,
        thresholds_on_grid,
    )
    return (lambda: PrivatePACLearner(thresholds_on_grid(8), 1.0),
            lambda: [pac_neighbouring_pair(8)])


def _net_margin() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from mechanisms.halfspaces import NetMarginLearner, jl_matrix
    from mechanisms.synthetic_part2 import margin_sample

    rng = np.random.default_rng(5)
    X, y, _ = margin_sample(8, 6, 0.5, rng)
    A = jl_matrix(2, 6, rng)
    y1 = y.copy()
    y1[-1] = -y1[-1]
    return (lambda: NetMarginLearner(1.0, 0.5, 2).selection_mechanism(A),
            lambda: [((X, y), (X, y1))])


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

    return (lambda: SetCoverMechanism(sympy.Rational(1, 10), 10, 4),
            lambda: [cover_neighbouring_pair(4)])


#: Audited forms of the source-document claims: (builder, samples, what is audited).
_AUDITED: dict[str, tuple[Callable[[], tuple[Callable[[], Any], Callable[[], Any]]], int,
                          str]] = {
    "002/private-pac-learner": (_pac, 200_000, "mechanisms.exponential_learner:"
                                "PrivatePACLearner over thresholds on a grid of 8"),
    "002/exponential-mechanism": (_pac, 200_000, "mechanisms.exponential_learner:"
                                  "PrivatePACLearner (the exponential mechanism, Delta = 1)"),
    "000/theorem-5": (_net_margin, 100_000, "mechanisms.halfspaces:NetMarginLearner."
                      "selection_mechanism (fixed JL projection, n = 8, m = 2)"),
    "004/theorem-3.5": (_greedy_cover, 20_000, "mechanisms.decision_lists:DPGreedyCover "
                        "(M = 4 features)"),
    "004/lemma-a1": (_set_cover, 20_000, "mechanisms.emcover:SetCoverMechanism "
                     "(4 sets, T = 10 rounds)"),
}


def _claim_target(key: str) -> Target:
    from dpaudit.numeric import exact
    from dpaudit.verify import CLAIMS

    claim = CLAIMS[key]
    params = CLAIM_INSTANCES.get(key, {})
    values = {sympy.Symbol(k): exact(v, k) for k, v in params.items()}

    def at(expr: Any) -> float:
        value = sympy.sympify(expr).xreplace(
            {s: values[sympy.Symbol(s.name)] for s in sympy.sympify(expr).free_symbols
             if sympy.Symbol(s.name) in values})
        return float(value) if not value.free_symbols else 0.0

    mechanism = pairs = None
    samples, source = 200_000, ""
    if key in _AUDITED:
        builder, samples, source = _AUDITED[key]
        mechanism, pairs = builder()
    return Target(
        name=key, title=f"{claim.document}: {claim.theorem}", group="source documents",
        epsilon=at(claim.epsilon), delta=at(claim.delta), summary=claim.statement,
        claim=key, parameters=dict(params), mechanism=mechanism, pairs=pairs,
        samples=samples, source=source,
        expect="refuted" if claim.correction else "private",
    )


def load_builtin_targets() -> list[Target]:
    """Register (and return) every built-in target: the source documents' claims (after
    :func:`dpaudit.verify.load_claim_modules`), then the catalogue, then the broken
    mechanisms.

    Raises:
        ImportError: if the ``mechanisms`` package is not importable.
    """
    from dpaudit.verify import CLAIMS, load_claim_modules
    from mechanisms.broken import broken_mechanisms
    from mechanisms.catalogue import correct_mechanisms

    load_claim_modules()
    out = [register_target(_claim_target(key)) for key in sorted(CLAIMS)]
    out += [register_target(_catalogue_target(m, "catalogue")) for m in correct_mechanisms()]
    out += [register_target(_catalogue_target(m, "broken")) for m in broken_mechanisms()]
    return out
