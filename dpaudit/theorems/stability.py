"""Uniform stability and private prediction: the conversions and amplification of 003.

Dagan and Feldman, "PAC learning with stable and private predictions" (COLT 2020; document
003).  A prediction mechanism (see :mod:`dpaudit.events.stability`) has binary output, so
(0, gamma)-DP of it is gamma-uniform stability and (epsilon, delta)-DP of it is
(epsilon, delta)-private prediction.  Each bound below lives in exactly one function; the
Theorem cards cite it, and the accountant rules at the end of this module apply it (they are
registered when :mod:`dpaudit.accountant` is imported).

Where this module is tighter than the paper, the paper's bound is a consequence (checked in
the tests): e.g. Corollary 1 uses e^gamma - 1 <= 2 gamma where the exact total-variation
bound is tanh-like.
"""

from __future__ import annotations

from dpaudit.deferred_imports import sympy
from dpaudit.events import Exponential
from dpaudit.events.stability import (
    RelabeledSubsampleSelection,
)
from dpaudit.expressions import as_expr
from dpaudit.numeric import exact, exact_min, float_up, from_float
from dpaudit.theorems.base import Bound, Theorem, register

__all__ = [
    "DP_TO_STABILITY",
    "LABEL_FLIP",
    "LEMMA8_PREDICTION",
    "PREDICTION_SUBSAMPLING",
    "RANDOMIZED_FLIP",
    "STABILITY_DECLARED",
    "SUBSAMPLED_CANDIDATES",
    "dp_to_stability",
    "flipped_epsilon",
    "lemma8_guarantee",
    "net_failure_bound",
    "prediction_subsampling_epsilon",
    "randomized_flip_epsilon",
    "selection_beta",
    "subsampled_candidates_stability",
]

STABILITY_DECLARED = register(
    Theorem(
        key="uniform_stability_is_prediction_dp",
        name="uniform stability is (0, gamma)-private prediction",
        citation="Dagan and Feldman 2020 (003), Section 2; Bousquet and Elisseeff 2002",
        assumptions="binary prediction at one query point; replace-one neighbours",
        statement="P[A_S(x)=y] <= P[A_S'(x)=y] + gamma for all x, y",
        bound=Bound.over_positive(
            "gamma", lambda gamma: {"epsilon": sympy.Integer(0), "delta": gamma}
        ),
        domain=("gamma > 0",),
    )
)

DP_TO_STABILITY = register(
    Theorem(
        key="binary_dp_to_stability",
        name="(eps, delta)-DP binary output is (e^eps - 1 + 2 delta)/(e^eps + 1)-stable",
        citation=(
            "total-variation bound of (eps, delta)-DP on a binary output (Kairouz, Oh, "
            "Viswanath 2015, Thm 2.4 specialised); 003 uses the looser e^eps - 1"
        ),
        assumptions="binary output; the two DP inequalities of both directions",
        statement="|P[M(S)=y] - P[M(S')=y]| <= (e^eps - 1 + 2 delta)/(e^eps + 1)",
        bound=Bound.over_positive(
            "epsilon delta",
            lambda eps, delta: {"delta": (sympy.exp(eps) - 1 + 2 * delta) / (sympy.exp(eps) + 1)},
        ),
        domain=("epsilon >= 0", "delta >= 0"),
    )
)


def dp_to_stability(epsilon: sympy.Expr, delta_: sympy.Expr) -> sympy.Expr:
    """Uniform stability of an (epsilon, delta)-DP mechanism with binary output.

    Privacy: the worst P' in P <= e^eps P' + delta, 1-P' <= e^eps (1-P) + delta gives
    P - P' <= (e^eps - 1 + 2 delta)/(e^eps + 1) (equality at P' = (1-delta)/(e^eps+1)).
    The bound increases in eps and delta, so numeric inputs are first rounded up by
    :func:`_rational_up` (exact for rational or symbolic inputs).
    """
    e = sympy.exp(_rational_up(exact(epsilon, "epsilon")))
    return (e - 1 + 2 * _rational_up(exact(delta_, "delta"))) / (e + 1)


def _rational_up(x: sympy.Expr) -> sympy.Expr:
    """A numeric ``x`` containing a logarithm, replaced by a rational upper bound (its float
    rounded up); other values (rationals, closed forms without log, symbolic expressions)
    are returned unchanged, so that derivations keep their exact form where it is cheap.

    For the bounds of this module that increase in their input.  Without it, sympy's exp of
    a closed-form epsilon such as the optimal zCDP conversion's (terms c log(N) with a large
    rational N from a float delta) is rewritten as N**c, whose exact roots sympy then
    searches for: minutes per query where the rounded input takes milliseconds.
    """
    if x.free_symbols or not x.has(sympy.log):
        return x
    return from_float(float_up(x))


SUBSAMPLED_CANDIDATES = register(
    Theorem(
        key="subsampled_candidates_stability",
        name="stability of selection over a subsample-built class (003, Lemma 7)",
        citation="Dagan and Feldman 2020 (003), Section 3.1, proof of Lemma 7 (tightened)",
        assumptions=(
            "T uniform subset of size n' of n records; the selection is s-stable for a "
            "fixed class; replace-one neighbours"
        ),
        statement="A is (n'/n + (1 - n'/n) s)-uniformly stable",
        # stated with n' <= n (003, Section 3.1: T is a subset of S)
        bound=Bound.over_positive(
            "n' n s", lambda n_sub, n, s: {"delta": n_sub / n + (1 - n_sub / n) * s}
        ),
        domain=("n' >= 1", "n >= n'", "s >= 0"),
        latex=r"\gamma = \tfrac{n'}{n} + \left(1 - \tfrac{n'}{n}\right) s",
    )
)


def subsampled_candidates_stability(
    sample: sympy.Expr, population: sympy.Expr, inner: sympy.Expr
) -> sympy.Expr:
    """Stability n'/n + (1 - n'/n) s of 003's stable learner.

    With probability n'/n the changed record is in T (the class may change: bound 1); else T
    and the class are unchanged and the selection's stability s applies.  003's Lemma 7 bounds
    the same sum by n'/n + 2 gamma using e^gamma <= 1 + 2 gamma.
    """
    ratio = exact(sample, "sample") / exact(population, "population")
    return ratio + (1 - ratio) * exact(inner, "stability")


LABEL_FLIP = register(
    Theorem(
        key="label_flip",
        name="label flipping turns (eps, delta)-private prediction into pure",
        citation=(
            "Dagan and Feldman 2020 (003), proof of Corollary 1 and of Theorem 2 "
            "(flip with probability alpha); exact constant derived here"
        ),
        assumptions="binary prediction flipped independently with probability a in (0, 1/2)",
        statement="A' is ln(e^eps + (1 - 2a) delta / a)-private prediction",
        bound=Bound.over_positive(
            "epsilon delta a",
            lambda eps, delta, a: {"epsilon": sympy.log(sympy.exp(eps) + (1 - 2 * a) * delta / a)},
        ),
        domain=("0 < a < 1/2", "epsilon >= 0", "delta >= 0"),
        latex=r"\varepsilon' = \ln\left(e^{\varepsilon} + \frac{(1-2a)\delta}{a}\right)",
    )
)


def flipped_epsilon(epsilon: sympy.Expr, delta_: sympy.Expr, flip: sympy.Expr) -> sympy.Expr:
    """Pure private-prediction epsilon after flipping an (epsilon, delta)-private prediction.

    Privacy: p' = (1-2a) p + a >= a, so (1-2a) delta <= ((1-2a) delta / a) p'_{S'} and
    p'_S <= e^eps p'_{S'} + (1-2a) delta <= (e^eps + (1-2a) delta/a) p'_{S'}.  With
    epsilon = 0 (a gamma-stable learner) this is ln(1 + (1-2a) gamma / a) <= gamma / a,
    003's Corollary 1 step (gamma = eps alpha / 2, a = alpha gives <= eps / 2).
    Increasing in epsilon and delta: numeric inputs are rounded up by :func:`_rational_up`.
    """
    f = exact(flip, "flip")
    e = sympy.exp(_rational_up(exact(epsilon, "epsilon")))
    return sympy.log(e + (1 - 2 * f) * _rational_up(exact(delta_, "delta")) / f)


RANDOMIZED_FLIP = register(
    Theorem(
        key="randomized_flip",
        name="a flipped binary prediction is randomized response",
        citation="Warner 1965; flipping with probability a is ln((1-a)/a)-DP whatever the input",
        assumptions="binary output flipped independently with probability a in (0, 1/2)",
        statement="A' is ln((1 - a)/a)-private prediction",
        bound=Bound.over_positive("a", lambda a: {"epsilon": sympy.log((1 - a) / a)}),
        domain=("0 < a < 1/2",),
    )
)


def randomized_flip_epsilon(flip: sympy.Expr) -> sympy.Expr:
    """ln((1-a)/a): every label has probability in [a, 1-a] whatever the data."""
    f = exact(flip, "flip")
    return sympy.log((1 - f) / f)


PREDICTION_SUBSAMPLING = register(
    Theorem(
        key="prediction_subsampling_df",
        name="private prediction amplified by subsampling (003, Lemma 5)",
        citation=(
            "Dagan and Feldman 2020 (003), Lemma 5 (after Kasiviswanathan et al. 2011), "
            "stated for eps and eta = m/n in (0, 1); the closed ends hold too: "
            "ln(1 + eta (e^eps - 1)) <= eta (e^eps - 1) <= 2 eps eta for eps <= 1"
        ),
        assumptions=(
            "inner eps-private (prediction) with eps <= 1 on a uniform subset of size "
            "m = eta n without replacement; replace-one neighbours"
        ),
        statement="A is 2 eps m / n-private prediction",
        bound=Bound.over_positive("epsilon m n", lambda eps, m, n: {"epsilon": 2 * eps * m / n}),
        domain=("0 < epsilon <= 1", "m >= 1", "n >= m"),
    )
)


def prediction_subsampling_epsilon(
    epsilon: sympy.Expr, sample: sympy.Expr, population: sympy.Expr
) -> sympy.Expr:
    """003 Lemma 5: 2 eps m/n (valid for eps <= 1; looser than ln(1 + (m/n)(e^eps - 1)))."""
    return 2 * exact(epsilon, "epsilon") * exact(sample, "sample") / exact(population, "population")


LEMMA8_PREDICTION = register(
    Theorem(
        key="dagan_feldman_lemma8",
        name="relabeled subsample selection is (eps, delta)-private prediction (003, Lemma 8)",
        citation=(
            "Dagan and Feldman 2020 (003), Lemmas 8, 10, 11 with explicit constants; "
            "eta-net failure bounded by the epsilon-net theorem (Haussler and Welzl 1987; "
            "Blumer et al. 1989, Thm A2.1) on the class of disagreement regions"
        ),
        assumptions=(
            "selection: exponential mechanism on the error count (sensitivity 1) over "
            "H_{S_I}; relabel: eps_R-private prediction, realizable learner; I uniform "
            "of size n' < n; class of VC dimension d; replace-one neighbours"
        ),
        statement=(
            "eps = ln(1 + 4 e^{k(2 beta + eps_R)} n'/(n - n')) + eps_EM + eps_R, "
            "delta = (n'/n) p_fail, k = eta (n - 1) + 1"
        ),
        domain=(
            "1 <= n' < n",
            "epsilon_R >= 0",
            "epsilon_EM >= 0",
            "0 <= beta",
            "0 < eta < 1",
            "d >= 1",
        ),
        latex=(
            r"\varepsilon = \ln\left(1 + 4e^{k(2\beta+\varepsilon_R)}\tfrac{n'}{n-n'}\right)"
            r" + \varepsilon_{EM} + \varepsilon_R,\ \delta = \tfrac{n'}{n} p_{fail}"
        ),
    )
)


def net_failure_bound(
    sample: sympy.Expr, vc_dimension: sympy.Expr, net_radius: sympy.Expr
) -> sympy.Expr:
    """An upper bound on P[a random (n'-1)-subset is not an eta-net] (003, Lemma 1).

    The eta-net condition of 003 (matched hypotheses disagree on at most an eta fraction) is
    an eta-net for the disagreement regions {h xor g}, whose shatter function is at most
    tau(m)^2 <= (e m / d)^(2d) (Sauer-Shelah, 003 Lemma 2).  The epsilon-net theorem gives
    P[fail] <= 2 tau_{disagree}(2m) 2^(-eta m / 2) for m >= 8/eta; 1 otherwise.
    """
    m = exact(sample, "sample") - 1
    d = exact(vc_dimension, "vc_dimension")
    eta = exact(net_radius, "net_radius")
    shatter = exact_min(2 ** (2 * m), (sympy.E * 2 * m / d) ** (2 * d))
    bound = exact_min(1, 2 * shatter * 2 ** (-eta * m / 2))
    if not (m.free_symbols or eta.free_symbols) and bool(m < 8 / eta):
        return sympy.Integer(1)
    return bound


def selection_beta(selection: Exponential) -> sympy.Expr:
    """beta = eps_EM / (2 Delta) (eps_EM / Delta for a monotone score): the factor of the
    selection's weights exp(beta q) (003, Section 4.2)."""
    scale = selection.sensitivity if selection.monotone else 2 * selection.sensitivity
    return selection.epsilon / scale


def lemma8_guarantee(
    event: RelabeledSubsampleSelection, relabel_epsilon: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr]:
    """(epsilon, delta) of 003's Section 4.2 algorithm, constants made explicit.

    Lemma 10's matching: matched h, g differ on k <= eta (n-1) + 1 records, so the selection
    weights differ by e^{beta k} (beta = eps_EM / (2 Delta), or eps_EM / Delta if monotone),
    the normalisers by 2 e^{beta k}, the relabel learner's predictions by e^{k eps_R} (group
    privacy), and each hypothesis has at most 2 partners: factor c = 4 e^{k (2 beta + eps_R)}
    (003: 4 e^6 with beta = 1/(eta n), eps_R = 1/(eta n), k <= 2 eta n).  The subsets I that
    contain the changed record and are nets are re-paired with n'/(n - n') weight; those that
    are not nets contribute delta; Lemma 11 adds eps_EM + eps_R.

    Raises:
        ValueError: if ``event.selection`` is not an :class:`~dpaudit.events.Exponential`
            (the lemma is stated for the exponential mechanism).
    """
    sel = event.selection
    if not isinstance(sel, Exponential):
        raise ValueError(
            f"lemma8_guarantee: event.selection must be an Exponential mechanism, got {sel}"
        )
    beta = selection_beta(sel)
    n, m = event.population, event.sample
    k = event.net_radius * (n - 1) + 1
    if not as_expr(relabel_epsilon).free_symbols:
        # a rational upper bound (rounded up): exp(k log r) would otherwise become the exact
        # rational r^k, whose digits grow with n (k ~ eta n)
        relabel_epsilon = from_float(float_up(relabel_epsilon))
    c = 4 * sympy.exp(k * (2 * beta + relabel_epsilon))
    epsilon = sympy.log(1 + c * m / (n - m)) + 2 * beta + relabel_epsilon
    delta_ = m / n * net_failure_bound(m, event.vc_dimension, event.net_radius)
    return epsilon, delta_
