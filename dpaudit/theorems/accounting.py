"""Cards of the accountant's own methods: the tightest of several valid candidates, and
privacy-loss-distribution (PLD) accounting with the dominating pair of each mechanism it
discretises.

They are named results like every other card (name, citation, assumptions, domain); the
accountant (:mod:`dpaudit.accountant.core`, :mod:`dpaudit.accountant.tight`) applies them.
They live here, in the theorem registry's layer, so that :data:`~dpaudit.theorems.THEOREMS`
holds them whatever is imported first.
"""

from __future__ import annotations

from dpaudit import events as ev
from dpaudit.events.base import Event
from dpaudit.theorems.base import Theorem, register

__all__ = ["PLD_ACCOUNTING", "PLD_PAIRS", "TIGHTEST"]

TIGHTEST = register(
    Theorem(
        key="tightest_candidate",
        name="tightest of the valid candidates",
        citation="every candidate is a valid upper bound, hence so is their minimum",
        assumptions="candidates for the same event at a delta no larger than the requested one",
        statement="M is (min_j eps_j, delta)-DP",
        domain=(),
        latex=r"\varepsilon = \min_j \varepsilon_j",
    )
)

PLD_ACCOUNTING = register(
    Theorem(
        key="pld_fft",
        name="privacy loss distribution",
        citation=(
            "Sommer, Meiser, Mohammadi 2019, Theorem 1 (PLD composition by convolution); "
            "Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, Theorem 4.3 (connect-the-dots "
            "pessimistic discretisation); Zhu, Dong, Wang 2022, Theorems 10-11 (dominating "
            "pairs, Poisson subsampling)"
        ),
        assumptions=(
            "adaptive composition of mechanisms whose dominating pairs are known; "
            "Poisson subsampling under add/remove; both directions are accounted"
        ),
        statement=(
            "delta_lower(eps) <= delta(eps) <= delta_upper(eps) with every discretisation, "
            "truncation and FFT rounding error bounded and added"
        ),
        # k parts composed (Sommer et al. 2019, Theorem 1); the pairs' own parameters, and the
        # sampling rate, are checked by the cards of :data:`PLD_PAIRS`
        domain=("k >= 1", "0 < delta < 1"),
    )
)


def _pair_card(
    key: str, mechanism: str, citation: str, domain: tuple[str, ...], limits: str
) -> Theorem:
    return register(
        Theorem(
            key=key,
            name=f"PLD dominating pair of the {mechanism}",
            citation=(
                f"{citation}; Poisson subsampling: Zhu, Dong, Wang 2022, Theorem 11 (add/remove)"
            ),
            assumptions=(
                f"the {mechanism} as declared; sampling probability q in (0, 1]; grid "
                f"limits of dpaudit.pld (outside them the builder refuses): {limits}"
            ),
            statement=(
                "the pair's privacy profile dominates the mechanism's: "
                "H_{e^eps}(M(D) || M(D')) <= H_{e^eps}(P || Q) for every eps, both directions"
            ),
            domain=(*domain, "0 < q <= 1"),
        )
    )


#: One card per PLD construction of :mod:`dpaudit.pld.mechanisms`; each domain is the
#: source's parameter range plus the grid limit the builder enforces (its ValueError).
PLD_PAIRS: dict[type[Event], Theorem] = {
    ev.Gaussian: _pair_card(
        "pld_pair_gaussian",
        "Gaussian mechanism",
        "Balle and Wang 2018, Theorem 8 (N(Delta, sigma^2) vs N(0, sigma^2))",
        ("sigma > 0", "Delta > 0", "sigma >= Delta/1000"),
        "sigma / Delta >= 1/1000",
    ),
    ev.Laplace: _pair_card(
        "pld_pair_laplace",
        "Laplace mechanism",
        "Koskela, Jalko, Honkela 2020, Section 6 (Lap(Delta, b) vs Lap(0, b))",
        ("b > 0", "Delta > 0", "Delta <= 700*b"),
        "Delta / b <= 700",
    ),
    ev.RandomizedResponse: _pair_card(
        "pld_pair_randomized_response",
        "randomized response",
        "Warner 1965; Kairouz, Oh, Viswanath 2016 (k-ary: two true values' output laws)",
        ("0 <= epsilon < 700", "k >= 2"),
        "epsilon < 700",
    ),
    ev.PureDP: _pair_card(
        "pld_pair_generic",
        "generic (epsilon, delta)-DP mechanism",
        "Kairouz, Oh, Viswanath 2015, Theorem 2.1; Murtagh and Vadhan 2016",
        ("0 <= epsilon < 700", "0 <= delta <= 1"),
        "epsilon < 700",
    ),
    ev.DiscreteLaplace: _pair_card(
        "pld_pair_discrete_laplace",
        "discrete Laplace mechanism",
        "Canonne, Kamath, Steinke 2020 (integer sensitivity; loss in [-Delta/t, Delta/t])",
        ("b > 0", "Delta >= 1"),
        "integer sensitivity",
    ),
    ev.DiscreteGaussian: _pair_card(
        "pld_pair_discrete_gaussian",
        "discrete Gaussian mechanism",
        "Canonne, Kamath, Steinke 2020 (N_Z(Delta, sigma^2) vs N_Z(0, sigma^2))",
        ("sigma > 0", "Delta >= 1"),
        "integer sensitivity",
    ),
    ev.Exponential: _pair_card(
        "pld_pair_bounded_range",
        "eps-bounded-range family (exponential mechanism)",
        "Dong, Durfee, Rogers 2020 (reduction to generalized randomized response); Zhu, "
        "Dong, Wang 2022, Theorem 10 (dominating pair of a family: upper bounds only)",
        ("0 < epsilon < 700",),
        "epsilon < 700",
    ),
}
PLD_PAIRS[ev.ApproxDP] = PLD_PAIRS[ev.PureDP]
