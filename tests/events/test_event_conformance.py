"""Every leaf event and combinator passes the event/accountant conformance suite."""

from __future__ import annotations

from dpaudit.conformance import EventConformance
from dpaudit.events import (
    ZCDP,
    AboveThreshold,
    ApproxDP,
    Composed,
    DiscreteGaussian,
    DiscreteLaplace,
    Exponential,
    Gaussian,
    Group,
    Laplace,
    Parallel,
    PostProcessed,
    PureDP,
    RandomizedResponse,
    ReportNoisyMax,
    SelfComposed,
)

APPROX_ONLY = ("1e-6", "1e-3")


class TestLaplace(EventConformance):
    def examples(self):
        return [Laplace(10), Laplace("0.5", sensitivity=2), Laplace(1.3)]

    def invalid(self):
        return [
            (lambda: Laplace(0), r"Laplace: scale must be in \(0, inf\), got 0"),
            (lambda: Laplace(-1), r"scale .* got -1"),
            (lambda: Laplace(float("nan")), r"scale .* got nan"),
            (lambda: Laplace(1, sensitivity=0), r"sensitivity must be in \(0, inf\)"),
            (lambda: Laplace(1, relation="sideways"), r"relation must be one of"),
        ]

    def monotone_pairs(self):
        return [(Laplace(10), Laplace(5)), (Laplace(2, sensitivity=1), Laplace(2, sensitivity=3))]


class TestGaussian(EventConformance):
    deltas = APPROX_ONLY

    def examples(self):
        return [Gaussian(1), Gaussian("0.8", sensitivity=2)]

    def invalid(self):
        return [
            (lambda: Gaussian(0), r"Gaussian: sigma must be in \(0, inf\), got 0"),
            (lambda: Gaussian(float("inf")), r"sigma .* got inf"),
        ]

    def monotone_pairs(self):
        return [(Gaussian(3), Gaussian(2)), (Gaussian(1), Gaussian(1, sensitivity=2))]


class TestDiscreteLaplace(EventConformance):
    def examples(self):
        return [DiscreteLaplace(3), DiscreteLaplace("0.25")]

    def invalid(self):
        return [(lambda: DiscreteLaplace(-2), r"DiscreteLaplace: scale must be in")]


class TestDiscreteGaussian(EventConformance):
    deltas = APPROX_ONLY

    def examples(self):
        return [DiscreteGaussian(2), DiscreteGaussian("1.5", sensitivity=3)]

    def invalid(self):
        return [(lambda: DiscreteGaussian(0), r"DiscreteGaussian: sigma must be in")]

    def monotone_pairs(self):
        return [(DiscreteGaussian(3), DiscreteGaussian(2))]


class TestExponential(EventConformance):
    def examples(self):
        return [Exponential("0.1"), Exponential(1, sensitivity=2, monotone=True)]

    def invalid(self):
        return [(lambda: Exponential(0), r"Exponential: epsilon must be in \(0, inf\), got 0")]

    def monotone_pairs(self):
        return [(Exponential("0.1"), Exponential("0.2"))]


class TestRandomizedResponse(EventConformance):
    def examples(self):
        return [RandomizedResponse(1), RandomizedResponse("0.5", categories=4)]

    def invalid(self):
        return [
            (
                lambda: RandomizedResponse(1, categories=1),
                r"categories must be an integer in \[2, inf\), got 1",
            ),
            (lambda: RandomizedResponse(-1), r"epsilon must be in"),
        ]


class TestReportNoisyMax(EventConformance):
    def examples(self):
        return [ReportNoisyMax(1), ReportNoisyMax("0.5", noise="laplace", monotone=True)]

    def invalid(self):
        return [
            (lambda: ReportNoisyMax(1, noise="cauchy"), r"noise must be one of"),
            (lambda: ReportNoisyMax(0), r"epsilon must be in"),
        ]


class TestAboveThreshold(EventConformance):
    def examples(self):
        return [AboveThreshold(1), AboveThreshold("0.5", cutoff=3, threshold_share="0.3")]

    def invalid(self):
        return [
            (lambda: AboveThreshold(1, cutoff=0), r"cutoff must be an integer in \[1, inf\)"),
            (
                lambda: AboveThreshold(1, threshold_share=1),
                r"threshold_share must be in \(0, 1\), got 1",
            ),
        ]


class TestDeclared(EventConformance):
    deltas = ("1e-3", "1e-2")

    def examples(self):
        return [PureDP("0.3"), ApproxDP(1, "1e-5"), ZCDP("0.05")]

    def invalid(self):
        return [
            (lambda: ApproxDP(1, 1), r"ApproxDP: delta must be in \[0, 1\), got 1"),
            (lambda: ApproxDP(1, -0.1), r"delta must be in"),
            (lambda: ZCDP(0), r"ZCDP: rho must be in"),
            (lambda: PureDP(0), r"PureDP: epsilon must be in"),
        ]


class TestCombinators(EventConformance):
    deltas = APPROX_ONLY

    def examples(self):
        return [
            Composed([Laplace(10), Gaussian(3)]),
            Parallel([Laplace(4), Laplace(2)]),
            Parallel([Laplace(4, relation="replace_one"), Laplace(2, relation="replace_one")]),
            PostProcessed(Gaussian(2)),
            Group(Laplace(10), 3),
            Group(Gaussian(8), 2),
            SelfComposed(Composed([Exponential("0.2"), Laplace(5)]), 2),
        ]

    def invalid(self):
        return [
            (lambda: Composed([]), r"Composed: events must be a non-empty list"),
            (
                lambda: Composed([Laplace(1), Laplace(1, relation="replace_one")]),
                r"must share one neighbouring relation",
            ),
            (lambda: Composed(Laplace(1)), r"got the single event"),
            (lambda: SelfComposed(Laplace(1), 0), r"count must be an integer in \[1, inf\)"),
            (lambda: Group(Laplace(1), 1.5), r"size must be an integer in \[1, inf\)"),
            (lambda: Parallel([Laplace(1), "x"]), r"events\[1\] must be an event"),
        ]

    def monotone_pairs(self):
        return [
            (Group(Laplace(10), 2), Group(Laplace(10), 3)),
            (Composed([Laplace(10)]), Composed([Laplace(10), Gaussian(3)])),
        ]
