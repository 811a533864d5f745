"""Composition of many distinct PLDs in one product of spectra (dpaudit.pld.many): certified
against an exact oracle (heterogeneous binary randomized response, enumerated in mpmath) and
against the pairwise composition."""

from __future__ import annotations

import itertools
import math

import mpmath
import pytest

from dpaudit import pld


def exact_rr_delta(eps0s: list[float], eps: float) -> float:
    """delta(eps) = E_P[(1 - e^{eps - L})_+] of binary RR with parameters eps0s, by
    enumerating the 2^N outcomes in 60-digit arithmetic."""
    with mpmath.workdps(60):
        total = mpmath.mpf(0)
        for signs in itertools.product((1, -1), repeat=len(eps0s)):
            prob = mpmath.mpf(1)
            loss = mpmath.mpf(0)
            for s, e in zip(signs, eps0s, strict=True):
                e = mpmath.mpf(e)
                p = mpmath.exp(e) / (1 + mpmath.exp(e))
                prob *= p if s == 1 else 1 - p
                loss += s * e
            if loss > eps:
                total += prob * (1 - mpmath.exp(eps - loss))
        return float(total)


EPS0S = [0.1, 0.25, 0.5, 0.8, 1.0, 1.3, 0.05, 0.7]


def test_many_distinct_randomized_responses_bracket_the_exact_profile() -> None:
    parts = [pld.randomized_response(e, 2, value_discretization=1e-3) for e in EPS0S]
    many = pld.PLDPair.compose_many(parts)
    for eps in (0.0, 0.5, 1.0, 2.0, 3.5):
        exact = exact_rr_delta(EPS0S, eps)
        lo, hi = many.delta_bounds(eps)
        assert lo <= exact <= hi
        assert hi - lo < 2e-3 * max(exact, 1e-3)


def test_compose_many_agrees_with_pairwise_composition() -> None:
    parts = [
        pld.gaussian(2.0 + 0.1 * i, value_discretization=1e-3, sampling_probability=0.2)
        for i in range(6)
    ] + [pld.laplace(5.0, value_discretization=1e-3)]
    many = pld.PLDPair.compose_many(parts)
    pairwise = parts[0]
    for p in parts[1:]:
        pairwise = pairwise.compose(p)
    lo_m, hi_m = many.epsilon_bounds(1e-6)
    lo_p, hi_p = pairwise.epsilon_bounds(1e-6)
    assert lo_m <= hi_p and lo_p <= hi_m  # both certified: the intervals meet
    assert hi_m <= hi_p * (1 + 1e-4)  # one window, no intermediate cuts: not looser
    assert lo_m >= lo_p - 1e-4 * hi_p  # the lower error no longer doubles per part
    assert hi_m - lo_m < 1e-3 * hi_m


def test_the_lower_error_grows_linearly_in_the_number_of_parts() -> None:
    """Issue 19: the lower side's error doubled with every composition (it was multiplied by
    |p| + |qt|, about 2), so thirty parts left no certified lower bound."""
    parts = [pld.laplace(20.0 + i, value_discretization=1e-3) for i in range(30)]
    acc = parts[0]
    for p in parts[1:]:
        acc = acc.compose(p)
    assert acc.remove.lower.err < 1e-9
    lo, hi = acc.epsilon_bounds(1e-6)
    assert lo > 0.99 * hi
    many = pld.PLDPair.compose_many(parts)
    assert many.remove.lower.err < 1e-9


def test_compose_many_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        pld.PLDPair.compose_many([])
    a = pld.laplace(10.0, value_discretization=1e-3)
    with pytest.raises(ValueError, match="grid steps differ"):
        pld.PLDPair.compose_many([a, pld.laplace(10.0, value_discretization=3e-3)])
    mixed = pld.PLDPair.compose_many([a, pld.laplace(10.0, value_discretization=4e-3)])
    assert mixed.h == 4e-3
    assert math.isfinite(mixed.epsilon_bounds(1e-6)[1])


def test_compose_stream_in_chunks_brackets_the_exact_profile_and_holds_one_chunk() -> None:
    """Chunks of at most 2 parts (a chunk budget below two parts' arrays): the chunked
    composition still brackets the exact profile (the mpmath oracle above), as tightly as
    one product; parts are drawn from the iterator lazily, at most one chunk at a time."""
    parts = [pld.randomized_response(e, 2, value_discretization=1e-3) for e in EPS0S]
    drawn = 0

    def lazily():  # type: ignore[no-untyped-def]
        nonlocal drawn
        for p in parts:
            drawn += 1
            yield p

    seen: list[tuple[int, int]] = []  # (parts in the call, parts drawn by then)
    real = pld.PLDPair.compose_many

    def spy(chunk):  # type: ignore[no-untyped-def]
        seen.append((len(chunk), drawn))
        return real(chunk)

    budget = min(p.nbytes for p in parts) + 1  # every chunk closes at its second part
    pld.PLDPair.compose_many = staticmethod(spy)  # type: ignore[method-assign]
    try:
        chunked = pld.PLDPair.compose_stream(lazily(), chunk_bytes=budget)
    finally:
        pld.PLDPair.compose_many = staticmethod(real)  # type: ignore[method-assign]
    chunks, final = seen[:-1], seen[-1]
    assert all(n <= 2 for n, _ in chunks) and sum(n for n, _ in chunks) == len(EPS0S)
    # each chunk is composed as soon as it is full: no part is drawn ahead of its chunk
    assert [d for _, d in chunks] == list(itertools.accumulate(n for n, _ in chunks))
    assert final == (len(chunks), len(EPS0S))  # then the chunks' results, once
    # no pending tilted refinement holds the parts' (or the chunks') arrays
    assert chunked.remove.pending is None and chunked.add.pending is None
    whole = pld.PLDPair.compose_many(parts)
    for eps in (0.0, 0.5, 1.0, 2.0, 3.5):
        exact = exact_rr_delta(EPS0S, eps)
        lo, hi = chunked.delta_bounds(eps)
        assert lo <= exact <= hi
        w_lo, w_hi = whole.delta_bounds(eps)
        assert hi - lo < 2 * (w_hi - w_lo) + 1e-12


def test_compose_stream_under_its_budget_is_compose_many() -> None:
    parts = [pld.gaussian(2.0 + 0.1 * i, value_discretization=1e-3) for i in range(4)]
    streamed = pld.PLDPair.compose_stream(iter(parts))
    whole = pld.PLDPair.compose_many(parts)
    assert streamed.epsilon_bounds(1e-6) == whole.epsilon_bounds(1e-6)
    with pytest.raises(ValueError, match="chunk_bytes"):
        pld.PLDPair.compose_stream(iter(parts), chunk_bytes=0)
    with pytest.raises(ValueError, match="PLDPairs"):
        pld.PLDPair.compose_stream(iter([parts[0], 3]))  # type: ignore[list-item]
