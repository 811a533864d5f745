"""Report targets of the mechanism catalogue (:mod:`mechanisms.catalogue`,
:mod:`mechanisms.broken`) and of the floating-point entries (:mod:`mechanisms.floating_point`),
registered by :func:`mechanisms.report_targets.register`.

A catalogue mechanism's *declared plan* is the event its claim rests on (what its author
declares the code does): for a broken mechanism it is the plan the buggy code *claims*, so the
accountant agrees with the claim and only the audit of the real code can disagree.
"""

from __future__ import annotations

from typing import Any

import sympy

import dpaudit.events as ev
from dpaudit.report import Target

__all__ = ["CATALOGUE_SAMPLES", "SVT_SAMPLES", "catalogue_target", "float_target"]

#: Samples per dataset for the catalogue audits (sparse-vector outputs are 10-dimensional
#: and their event search is slower, so they get fewer).
CATALOGUE_SAMPLES = 200_000
SVT_SAMPLES = 40_000


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
    if isinstance(m, c.AuditableMechanism) and type(m).__name__.startswith("BrokenSparseVector"):
        return ev.AboveThreshold(eps)  # declared as sparse vector with cutoff 1
    raise ValueError(f"no declared plan is known for {m!r}")


def _slug(name: str) -> str:
    out = []
    for i, ch in enumerate(name.replace("[", "-").replace("]", "")):
        if ch.isupper() and i and name[i - 1].islower():
            out.append("-")
        out.append(ch.lower())
    return "".join(out).strip("-")


def _summary(m: Any) -> str:
    """A catalogue mechanism's first docstring paragraph, and what is wrong with it."""
    doc = (type(m).__doc__ or "").strip()
    summary = " ".join(doc.split("\n\n")[0].split())
    wrong = [p for p in doc.split("\n\n") if "What is wrong" in p]
    if wrong:
        summary += " " + " ".join(wrong[0].split())
    return summary


def catalogue_target(m: Any, group: str) -> Target:
    """A catalogue mechanism (correct: group ``catalogue``; broken: group ``broken``)."""
    samples = SVT_SAMPLES if "SparseVector" in type(m).__name__ else CATALOGUE_SAMPLES
    expect = "broken" if group == "broken" else "private"
    return _entry_target(m, group, group, _declared_plan(m), samples, expect)


def _entry_target(
    m: Any, prefix: str, group: str, plan: ev.Event, samples: int, expect: str
) -> Target:
    """The target of one catalogue entry ``m``, audited on its own pairs."""
    pairs = tuple(m.pairs)
    return Target(
        name=f"{prefix}/{_slug(m.name)}",
        title=m.name,
        group=group,
        epsilon=float(m.epsilon),
        delta=float(m.delta),
        summary=_summary(m),
        plan=plan,
        mechanism=lambda: m,
        pairs=lambda: pairs,
        samples=samples,
        true_epsilon=m.true_epsilon,
        expect=expect,
        source=f"{type(m).__module__}:{type(m).__qualname__}",
    )


def _float_plan(m: Any) -> ev.Event:
    """The event a floating-point catalogue entry's claim rests on: the textbook mechanism its
    code means to be (the audit of the code in doubles is what can disagree)."""
    from mechanisms import floating_point as fp

    eps = sympy.nsimplify(m.epsilon)
    if isinstance(m, fp.BrokenNaiveFloatLaplace):
        return ev.Laplace(1 / eps, 1)
    if isinstance(m, fp.BrokenBoxMullerGaussian):
        return ev.Gaussian(sympy.Rational(m.sigma), 1)  # the float sigma, exactly
    if isinstance(m, fp.GeometricCount):
        return ev.DiscreteLaplace(1 / eps, 1)
    if isinstance(m, (fp.SnappingLaplace, fp.BrokenFloat32ClampedSum)):
        return ev.PureDP(eps)  # snapping: epsilon-DP (Mironov 2012, Section 5.2, Theorem 1)
    raise ValueError(f"no declared plan is known for {m!r}")


def float_target(m: Any) -> Target:
    """A floating-point catalogue entry (:mod:`mechanisms.floating_point`), group
    ``floating point``, audited in doubles (its ``arithmetic`` is ``"float"``)."""
    expect = "broken" if m.name.startswith("Broken") else "private"
    return _entry_target(
        m, "floating-point", "floating point", _float_plan(m), CATALOGUE_SAMPLES, expect
    )
