"""The f-DP one-run audit (Mahloujifar, Melis, Chaudhuri, ICML 2025, "Auditing f-Differential
Privacy in One Run", arXiv 2410.22235): a hypothesised trade-off curve tested from one run.

Setting (as in :mod:`dpaudit.audit.one_run`): m canaries, each included independently with
probability 1/2 (S_j in {0, 1}); from the output O the auditor makes exactly k guesses
(top/bottom scores, the rest abstained) and counts its correct guesses W.  The hypothesis is
"the trainer is f-DP with respect to each canary" for a symmetric trade-off function f; write
``g = 1 - f`` (concave, nondecreasing) and ``g_inv(y) = min{x : g(x) >= y}``.

The recursion of the paper (its Algorithm "audit_rh_with_cap"; the same recursion is in the
auditing library of jax_privacy and in the authors' PrivacyGuard, and on the mu-GDP curve our
bound agrees with jax-privacy 2.0.0's to its root-finding tolerance 1e-6:
tests/audit/test_one_run_reference.py, bench/one_run.md section 5) and our proof of it -- we
could not read the paper's proof, so the argument below is re-derived here and is what the
code relies on:

1. *One constraint per count i (1 <= i <= k).*  For canary j let W_{-j} be the correct
   guesses on the other canaries (a function of O and S_{-j}).  The rule "keep j's guess iff
   W_{-j} >= i - 1" is, for fixed S_{-j}, a test on O; so f-DP (both directions, S_j's two
   values being neighbours) and concavity of g give, for each j and then averaged over
   S_{-j} and over j (Jensen, g concave):
   ``R_i <= g(H_{i-1})`` with ``R_i = E[W 1{W >= i}] / m`` (kept correct guesses:
   ``j`` correct and ``W_{-j} >= i - 1`` iff j correct and ``W >= i``) and
   ``H_i = E[(k - W) 1{W >= i}] / m`` (kept wrong guesses: ``W = W_{-j}``).
   (Per canary, with P1/P0 the laws of O given S_j = 1/0 and phi+/phi- the kept "included"
   / "excluded" guesses: correct = (E_P1 phi+ + E_P0 phi-)/2 <= (g(E_P0 phi+) +
   g(E_P1 phi-))/2 <= g(wrong).)
2. *The greedy chain is a lower bound.*  Suppose ``P[W >= c] = P >= tau``.  Moving the mass
   above c down to c keeps every constraint with i <= c (R_i falls and H_{i-1} rises by the
   same amount, g is nondecreasing) and creates none above c, so assume W <= c.  Let
   ``(R*_c, H*_c) = (c tau / m, (k - c) tau / m)`` and, for i = c-1, ..., 0,
   ``H*_i = max(H*_{i+1}, g_inv(R*_{i+1}))``, ``R*_i = R*_{i+1} + i/(k-i) (H*_i - H*_{i+1})``
   (the least mass p_i at count i that the constraint with index i+1 allows).  By induction
   ``E_i = H_i - H*_i >= 0`` and ``D_i = R_i - R*_i >= i/(k-i) E_i`` (true at i = c with
   equality; ``H_i >= max(H_{i+1}, g_inv(R_{i+1}))`` and ``R_i = R_{i+1} + i/(k-i)
   (H_i - H_{i+1})`` carry it down since ``i/(k-i)`` decreases with i).  Hence
   ``R_0 + H_0 >= R*_0 + H*_0``; but ``R_0 + H_0 = k/m`` (k guesses, total mass 1).
3. *The test.*  If ``R*_0 + H*_0 > k/m`` the assumption is impossible: ``P[W >= c] < tau``
   under the hypothesis, so rejecting it when the observed count c passes the check is a test
   of level tau (its rejection region lies inside {W >= c_min} for the least rejected c_min).
4. *A family of curves.*  For nested curves (f_theta decreasing in theta: ``(eps, delta)``-DP
   for growing eps, mu-GDP for growing mu), a larger theta has a larger g, a smaller g_inv
   and a smaller chain, so every count rejected at theta is rejected at each theta' < theta;
   the largest rejected theta therefore exceeds the true one with probability <= tau (the
   bisection below reports only verified points, as in :mod:`dpaudit.audit.one_run`).

Curves (both symmetric): ``"approx-dp"`` -- f_{eps, delta}(a) = max(0, 1 - delta - e^eps a,
e^-eps (1 - delta - a)) (Dong, Roth, Su 2022, Proposition 2.5: (eps, delta)-DP is
f_{eps,delta}-DP), so ``g_inv(y) = max(0, (y - delta) e^-eps, 1 - delta - e^eps (1 - y))``;
``"gaussian"`` -- mu-GDP, G_mu(a) = Phi(Phi^-1(1 - a) - mu) (Dong, Roth, Su 2022, Definition
2.6), so ``g_inv(y) = Phi(Phi^-1(y) - mu)``.  The second is a *stronger* claim: refuting
mu-GDP does not refute (eps(mu), delta)-DP for a trainer whose curve is not Gaussian, so it is
used only for a claim stated as mu-GDP (a trainer that declares it, e.g. full-batch noisy
gradient descent).

Floating point: every g_inv is scaled down by :data:`_ROUND` and every chain step is rounded
toward smaller values, so the computed chain is below the exact one and a count rejected in
floats is rejected exactly (the allowances exceed the few ulps each step can lose).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy.special import ndtr, ndtri

__all__ = ["CURVES", "fdp_rejects", "fdp_theta_lower", "g_inverse"]

#: The trade-off curves a claim may be stated in (module docstring).
CURVES = ("approx-dp", "gaussian")
#: Relative allowance by which every computed g_inv and chain step is made smaller.
_ROUND = 1e-9
#: Bisection bracket (eps or mu) and steps; the upper end rejects nothing in floats.
_THETA_MAX = 40.0
_STEPS = 50


def g_inverse(curve: str, theta: float, delta: float = 0.0) -> Callable[[float], float]:
    """``g_inv(y) = min{x : 1 - f(x) >= y}`` of the curve, made smaller by :data:`_ROUND`.

    Args:
        curve: ``"approx-dp"`` (theta = epsilon, with ``delta``) or ``"gaussian"`` (theta = mu).
        theta: the curve's parameter, >= 0.
        delta: the delta of ``"approx-dp"``.

    Returns:
        A function of y in [0, 1] giving a value at most g_inv(y).
    """
    if curve == "gaussian":

        def gdp(y: float) -> float:
            if y >= 1.0:
                return 1.0
            return float(ndtr(ndtri(y) - theta)) * (1.0 - _ROUND)

        return gdp
    e_plus, e_minus = math.exp(theta), math.exp(-theta)

    def approx(y: float) -> float:
        return max(0.0, (y - delta) * e_minus, 1.0 - delta - e_plus * (1.0 - y)) * (1.0 - _ROUND)

    return approx


def fdp_rejects(m: int, k: int, c: int, tau: float, g_inv: Callable[[float], float]) -> bool:
    """Whether c correct guesses out of k (m canaries) reject the curve at level ``tau``.

    The greedy chain of the module docstring (step 2), stopped as soon as its mass exceeds
    the total (reject) or stops growing (its value is then final).
    """
    if c <= 0 or k <= 0:
        return False
    shrink = 1.0 - _ROUND
    r = tau * c / m * shrink
    h = tau * (k - c) / m * shrink
    total = k / m * (1.0 + _ROUND)
    for i in range(c - 1, -1, -1):
        h_new = max(h, g_inv(r))
        if h_new == h:
            break
        r = r + i / (k - i) * (h_new - h) * shrink
        h = h_new
        if r + h > total:
            return True
    return r + h > total


def fdp_theta_lower(m: int, k: int, c: int, tau: float, curve: str, delta: float = 0.0) -> float:
    """The largest verified parameter (epsilon or mu) rejected by c correct out of k guesses.

    Args:
        m: canaries; k: guesses (exactly k every run); c: correct guesses.
        tau: the level of the test.
        curve: ``"approx-dp"`` (returns epsilon at ``delta``) or ``"gaussian"`` (returns mu).
        delta: the delta of ``"approx-dp"``.

    Returns:
        A float >= 0: 0.0 when even theta = 0 is not rejected; otherwise a theta at which the
        test rejected (the lower end of the bisection, always verified).
    """
    if not fdp_rejects(m, k, c, tau, g_inverse(curve, 0.0, delta)):
        return 0.0
    lo, hi = 0.0, _THETA_MAX
    for _ in range(_STEPS):
        mid = (lo + hi) / 2
        if fdp_rejects(m, k, c, tau, g_inverse(curve, mid, delta)):
            lo = mid
        else:
            hi = mid
    return lo
