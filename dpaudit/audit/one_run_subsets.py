"""Auditing a prefix of the canaries, so that a one-run bound does not fall as m grows.

Why.  With delta > 0 Steinke, Nasr, Jagielski 2023 (Theorem 5.2 / Corollary 5.4) add
``2 m delta max_i P[v - i <= Bin(r, q) < v] / i`` to the p-value: every canary that *could*
have been guessed pays delta, so past some m their bound falls (bench/one_run.md, before
this module: 0.373, 0.335, 0.290, 0.278 of the theoretical epsilon at sigma 1 for
m = 10^3 .. 10^6 on the idealized trainer).

What.  An audit may certify on the first m' canaries for each m' in a set of prefix sizes
fixed before the run (``subsets`` of :func:`dpaudit.audit.audit_one_run`), guessing among
those m' scores only (the k+ highest included, the k- lowest excluded, ties by index) and
certifying with m' in place of m; it reports the largest bound over every (m', k+, k-)
tried, each at level ``(1 - confidence) / T``, T the number of (m', k+, k-) tried (a union
bound, Bonferroni).

Soundness.  Let A be the first m' canaries and S = (S_A, S_B) the inclusion bits, all
independent and uniform (the mask is drawn before training and independently of it).  The
claim "(eps, delta)-DP with respect to adding or removing each canary" holds for *every*
value of the other canaries' bits, so for each fixed s_B the map s_A -> train(s_A, s_B) is
an (eps, delta)-DP algorithm on the m' canaries of A (the canaries of B and their bits become
part of its fixed input; f-DP per canary likewise, Dong, Roth, Su 2022, Definition 2.3, is a
statement about neighbouring inputs, which fixing s_B does not change).  The guesses on A
are a function of the output alone (the scores of A, ties by index), so, conditional on
S_B = s_B, Theorem 3.1 / Theorem 5.2 of Steinke et al. (with m' canaries: their algorithm
may have any fixed non-canary input) and the recursion of :mod:`dpaudit.audit.one_run_fdp`
(whose step 1 conditions on the other canaries' bits already) bound
``P[W_A >= v | S_B = s_B]`` by the p-value computed with m'.  S_A is independent of S_B, so
averaging over s_B bounds ``P[W_A >= v]`` by the same p-value: each (m', k+, k-) is a test of
level ``(1 - confidence) / T`` of the claim, by the union bound all T hold together with
probability at least ``confidence``, and the reported maximum is then at most the true
epsilon with that probability.  The prefix sizes and guess counts are functions of m, delta
and the method alone (never of the scores or the mask), as the theorems require.

The default (:func:`default_subsets`): one prefix, chosen before the run.  With delta > 0
a union bound costs far more than log(T): both delta terms must be beaten by the level
(Theorem 5.2's window by roughly ``2 m delta / level``), so splitting the level over several
prefixes lowered the bound more than the best prefix raised it.  Measured on the idealized
trainer (one-off runs while this was written, seed 2024, sigma 1, Steinke et al.): with
prefixes 10^3, 10^4, ..., m under one union bound (24 tests at m = 10^6) the bound was
0.492, 0.416, 0.379 of the theoretical epsilon at m = 10^4, 10^5, 10^6, against 0.515,
0.475, 0.439 for all m canaries alone (5, 7, 8 tests).  So the default certifies
Steinke et al.'s bound on the first ``min(m, M)`` canaries, M = :func:`steinke_prefix`
(delta): the largest power of ten with ``M delta <= 0.1`` (10^4 at delta = 1e-5), at least
:data:`MIN_SUBSET`; bench/one_run.md ("Where each bound peaks") shows the stand-alone bound
on prefixes of 10^3 .. 10^6 canaries: Steinke et al.'s peaked at 10^4 for sigma 0.5, 1 and 2
and fell by 9-15% by 10^6.  Then the bound at m is the stand-alone bound at min(m, M) (the
first M canaries of an m-run of the idealized trainer have exactly the law of an M-run):
non-decreasing in m, constant past M.  The f-DP recursion (either curve) did not fall
with m once the guess grid was coarse (same table), so it audits all m canaries
(prefix m); the Gaussian-score bound (:mod:`dpaudit.audit.one_run_gauss`) pays no delta per
canary and uses every score in one test.  With delta = 0 no term grows with m: all m.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from dpaudit.audit.one_run import default_guesses
from dpaudit.audit.validation import check as _check
from dpaudit.audit.validation import is_int as _is_int

__all__ = [
    "MIN_SUBSET",
    "STEINKE_M_DELTA",
    "correct_counts",
    "default_subsets",
    "plan_candidates",
    "steinke_prefix",
]

#: The smallest prefix the default audits (a prefix of fewer canaries certifies little).
MIN_SUBSET = 1_000
#: Steinke et al.'s default prefix M is the largest power of ten with ``M delta`` at most this.
STEINKE_M_DELTA = 0.1


def steinke_prefix(delta: float) -> int:
    """The prefix size M of Steinke et al.'s default audit at ``delta`` > 0 (module
    docstring): the largest power of ten with ``M delta <= STEINKE_M_DELTA``, at least
    :data:`MIN_SUBSET`.

    Args:
        delta: the claimed delta, in (0, 1).

    Returns:
        A power of ten >= :data:`MIN_SUBSET`.
    """
    size = MIN_SUBSET
    while size * 10 * delta <= STEINKE_M_DELTA:
        size *= 10
    return size


def default_subsets(m: int, delta: float, method: str) -> tuple[int, ...]:
    """The prefix sizes audited by default (module docstring): ``(min(m, M),)`` with
    M = :func:`steinke_prefix` (delta) for ``"steinke"`` with delta > 0, else ``(m,)``.
    A function of m, delta and the method only, fixed before the run.

    Args:
        m: number of canaries, >= 1.
        delta: the claimed delta.
        method: the certification (``"steinke"``, ``"f-dp"`` or ``"gaussian"``).

    Returns:
        One prefix size in [1, m].
    """
    if method == "steinke" and delta > 0:
        return (min(m, steinke_prefix(delta)),)
    return (m,)


def plan_candidates(
    m: int,
    delta: float,
    method: str,
    guesses: Iterable[tuple[int, int]] | None,
    subsets: Iterable[int] | None,
) -> list[tuple[int, int, int]]:
    """The ``(m', k_plus, k_minus)`` tests of an audit, fixed before the run.

    ``subsets`` None: :func:`default_subsets` when ``guesses`` is None, else ``(m,)`` (the
    given guess counts on all m canaries).  ``guesses`` None:
    :func:`~dpaudit.audit.one_run.default_guesses` of each m'; else every given pair on every
    prefix it fits (k+ + k- <= m').

    Args:
        m: number of canaries.
        delta, method: the claim's delta and the certification (:func:`default_subsets`).
        guesses: the ``(k_plus, k_minus)`` pairs, or None.
        subsets: the prefix sizes, each an integer in [1, m], or None.

    Returns:
        The distinct tests, by increasing m'.

    Raises:
        TypeError: a guess pair or a prefix size that is not made of integers.
        ValueError: a pair or a size out of range, or a pair that fits no prefix.
    """
    if subsets is None:
        sizes = list(default_subsets(m, delta, method)) if guesses is None else [m]
    else:
        sizes = _check_subsets(subsets, m)
    pairs = None if guesses is None else _check_guesses(guesses, m)
    out: list[tuple[int, int, int]] = []
    for size in sizes:
        for kp, km in default_guesses(size) if pairs is None else pairs:
            if kp + km <= size and (size, kp, km) not in out:
                out.append((size, kp, km))
    for kp, km in pairs or ():
        _check(
            "guesses",
            (kp, km),
            kp + km <= max(sizes),
            f"pairs with k_plus + k_minus <= the largest prefix audited ({max(sizes)})",
        )
    return out


def correct_counts(
    scores: np.ndarray, included: np.ndarray, tests: Sequence[tuple[int, int, int]]
) -> list[int]:
    """Correct guesses of each ``(m', k_plus, k_minus)``: among the first m' canaries, the
    k+ highest scores guessed included and the k- lowest excluded (ties by canary index,
    the same counts as :func:`~dpaudit.audit.one_run.count_correct` on the prefix), one
    ordering per prefix size."""
    out: list[int] = []
    cached: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for size, kp, km in tests:
        if size not in cached:
            order = np.argsort(-scores[:size], kind="stable")
            inc = included[:size][order]
            cached = {
                size: (
                    np.concatenate([[0], np.cumsum(inc)]),
                    np.concatenate([[0], np.cumsum(~inc[::-1])]),
                )
            }
        top, bottom = cached[size]
        out.append(int(top[kp] + bottom[km]))
    return out


def _check_subsets(subsets: Iterable[Any], m: int) -> list[int]:
    sizes: list[int] = []
    for size in subsets:
        if not _is_int(size):
            raise TypeError(f"subsets must hold integer prefix sizes, got {size!r}")
        _check("subsets", size, 1 <= size <= m, f"prefix sizes in [1, m] = [1, {m}]")
        if int(size) not in sizes:
            sizes.append(int(size))
    if not sizes:
        raise ValueError("subsets must hold at least one prefix size, got none")
    return sorted(sizes)


def _check_guesses(guesses: Iterable[Any], m: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for g in guesses:
        if not (isinstance(g, Sequence) and len(g) == 2 and all(_is_int(k) for k in g)):
            raise TypeError(f"guesses must hold (k_plus, k_minus) integer pairs, got {g!r}")
        kp, km = int(g[0]), int(g[1])
        _check(
            "guesses",
            g,
            kp >= 0 and km >= 0 and 1 <= kp + km <= m,
            f"pairs (k_plus, k_minus) >= 0 with 1 <= k_plus + k_minus <= m = {m}",
        )
        out.append((kp, km))
    if not out:
        raise ValueError("guesses must hold at least one (k_plus, k_minus) pair, got none")
    return out
