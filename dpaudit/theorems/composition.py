"""Composition, parallel composition, post-processing and group privacy.

Every function here computes one bound exactly (an exact number for plain numbers, sympy
otherwise) and is the only place its formula lives; the :class:`~dpaudit.theorems.base.Theorem`
cards cite them.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Relation
from dpaudit.numeric import exact_max
from dpaudit.numeric import functions as fn
from dpaudit.theorems.base import Bound, Theorem, register


def _sum(name: str, power: int = 1) -> sympy.Expr:
    """sum_{i=1}^k name[i]^power, over the k composed mechanisms (the cards' bounds)."""
    i = sympy.Symbol("i", integer=True, positive=True)
    k = sympy.Symbol("k", positive=True)
    return sympy.Sum(sympy.IndexedBase(name)[i] ** power, (i, 1, k))


BASIC_COMPOSITION = register(
    Theorem(
        key="basic_composition",
        name="basic composition",
        citation="Dwork, Kenthapadi, McSherry, Mironov, Naor 2006; Dwork and Roth 2014, Thm 3.16",
        assumptions="k mechanisms, each (eps_i, delta_i)-DP, run adaptively on the same dataset",
        statement="the sequence of outputs is (sum eps_i, sum delta_i)-DP",
        bound=Bound(lambda: {"epsilon": _sum("epsilon"), "delta": _sum("delta")}),
        domain=("k >= 1",),
        latex=r"\varepsilon = \sum_{i=1}^k \varepsilon_i,\ \delta = \sum_{i=1}^k \delta_i",
    )
)


def basic_composition(
    epsilons: Sequence[sympy.Expr], deltas: Sequence[sympy.Expr] | None = None
) -> tuple[sympy.Expr, sympy.Expr]:
    """(sum eps_i, sum delta_i): basic composition of (eps_i, delta_i)-DP mechanisms.

    Privacy: Dwork and Roth 2014, Theorem 3.16 (adaptive, any neighbouring relation).
    """
    return fn.Add(*epsilons), fn.Add(*(deltas or ()))


def self_composition(
    epsilon: sympy.Expr, delta_: sympy.Expr, count: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr]:
    """(k eps, k delta): basic composition of k copies of one (eps, delta)-DP mechanism."""
    return count * epsilon, count * delta_


PARALLEL_COMPOSITION = register(
    Theorem(
        key="parallel_composition",
        name="parallel composition",
        citation="McSherry 2009 (PINQ), Theorem 4",
        assumptions=(
            "mechanisms run on disjoint parts of a partition chosen independently of the "
            "data; under replace-one a record replaced in a partition of the record domain "
            "may move between two parts, while in a partition of the records' positions it "
            "stays in its part"
        ),
        statement=(
            "add/remove, or replace-one on a partition of positions: (max eps_i, max "
            "delta_i)-DP; replace-one on a partition of values: (sum of the two largest eps_i, "
            "sum of the two largest delta_i)-DP"
        ),
        bound=Bound(
            lambda: {"epsilon": sympy.Max(*(sympy.IndexedBase("epsilon")[j] for j in (1, 2)))}
        ),
        domain=("k >= 1",),
        latex=r"\varepsilon = \max_i \varepsilon_i\ \text{(add/remove)}",
    )
)


def _two_largest_sum(values: Sequence[sympy.Expr]) -> sympy.Expr:
    if len(values) == 1:
        return values[0]
    pairs = [values[a] + values[c] for a in range(len(values)) for c in range(a + 1, len(values))]
    return exact_max(*pairs)


def parallel_composition(
    epsilons: Sequence[sympy.Expr],
    deltas: Sequence[sympy.Expr],
    relation: Relation,
    partition: str = "values",
) -> tuple[sympy.Expr, sympy.Expr]:
    """The guarantee of mechanisms run on disjoint parts of the data.

    Under add/remove a record lies in one part, so the guarantee is the worst part's.  Under
    replace-one on a partition of the record domain (``partition="values"``) a record can be
    replaced by one that falls in another part (a histogram bin, say), which changes two parts,
    so the two largest guarantees add up.  Under replace-one on a partition of the records'
    positions fixed independently of the data (``"positions"``), the neighbours differ at one
    position, hence in one part: the others get identical inputs, so again the worst part's.

    Privacy: McSherry 2009, Theorem 4 (add/remove); the replace-one form on values follows by
    applying it twice (remove the old record, add the new one); on positions, the part that
    holds the differing position runs on neighbouring inputs and the other parts on equal
    ones (their outputs, independent given the partition, have equal laws): the proof of
    Theorem 4 with the one changed part.
    """
    if relation is Relation.ADD_REMOVE or partition == "positions":
        return exact_max(*epsilons), exact_max(*deltas)
    return _two_largest_sum(list(epsilons)), _two_largest_sum(list(deltas))


POST_PROCESSING = register(
    Theorem(
        key="post_processing",
        name="post-processing",
        citation="Dwork and Roth 2014, Proposition 2.1",
        assumptions="a data-independent (possibly randomised) function of the output",
        statement="f(M(D)) inherits every DP, zCDP, RDP and GDP guarantee of M",
        domain=(),
        latex=r"\text{unchanged}",
    )
)

GROUP_PRIVACY = register(
    Theorem(
        key="group_privacy",
        name="group privacy",
        citation=(
            "Dwork and Roth 2014, Theorem 2.2 (pure); Vadhan 2017, Lemma 2.2 "
            "(approximate); Bun and Steinke 2016, Proposition 1.9 (zCDP)"
        ),
        assumptions="datasets at distance at most k under the event's relation",
        statement=(
            "pure: (k eps)-DP; approximate: (k eps, k e^((k-1) eps) delta)-DP; zCDP: (k^2 rho)-zCDP"
        ),
        bound=Bound.over_positive(
            "k epsilon delta rho",
            lambda k, eps, delta, rho: {
                "epsilon": k * eps,
                "delta": k * sympy.exp((k - 1) * eps) * delta,
                "rho": k**2 * rho,
            },
        ),
        domain=("k >= 1",),
        latex=(
            r"\varepsilon' = k\varepsilon,\ \delta' = k e^{(k-1)\varepsilon}\delta,\ "
            r"\rho' = k^2\rho"
        ),
    )
)


def group_approx(
    epsilon: sympy.Expr, delta_: sympy.Expr, size: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr]:
    """(k eps, k e^((k-1) eps) delta): group privacy of an (eps, delta)-DP mechanism.

    Privacy: Vadhan 2017, Lemma 2.2 (pure case: Dwork and Roth 2014, Theorem 2.2).
    """
    return size * epsilon, size * fn.exp((size - 1) * epsilon) * delta_


def group_zcdp(rho_: sympy.Expr, size: sympy.Expr) -> sympy.Expr:
    """k^2 rho: group privacy of rho-zCDP (Bun and Steinke 2016, Proposition 1.9)."""
    return size**2 * rho_


GDP_COMPOSITION = register(
    Theorem(
        key="gdp_composition",
        name="composition of Gaussian mechanisms (GDP)",
        citation="Dong, Roth, Su 2022 (Gaussian differential privacy), Corollary 3.3",
        assumptions="k adaptively chosen mu_i-GDP mechanisms (e.g. Gaussian mechanisms)",
        statement="the composition is sqrt(sum mu_i^2)-GDP, exactly (no slack)",
        bound=Bound(lambda: {"mu": sympy.sqrt(_sum("mu", 2))}),
        domain=("k >= 1",),
        latex=r"\mu = \sqrt{\textstyle\sum_i \mu_i^2}",
    )
)


def gdp_composition(mus: Sequence[sympy.Expr]) -> sympy.Expr:
    """sqrt(sum mu_i^2) (Dong, Roth, Su 2022, Corollary 3.3)."""
    return fn.sqrt(fn.Add(*[m**2 for m in mus]))


def gdp_group(mu_: sympy.Expr, size: sympy.Expr) -> sympy.Expr:
    """k mu: group privacy of mu-GDP (Dong, Roth, Su 2022, Theorem 2.14)."""
    return size * mu_


GDP_GROUP = register(
    Theorem(
        key="gdp_group",
        name="group privacy for GDP",
        citation="Dong, Roth, Su 2022 (Gaussian differential privacy), Theorem 2.14",
        assumptions="datasets at distance at most k",
        statement="a mu-GDP mechanism is (k mu)-GDP for groups of size k",
        bound=Bound.over_positive("k mu", lambda k, mu: {"mu": k * mu}),
        domain=("k >= 1",),
        latex=r"\mu' = k\mu",
    )
)
