"""Neighbouring pairs: the two datasets an audit compares, and families of candidates.

For query-answer mechanisms (report-noisy-max, sparse vector, histograms) the dataset is
represented by its vector of query answers, and two datasets are neighbours when every answer
moves by at most the sensitivity. :func:`query_pairs` gives the standard patterns that the
peer auditors search (StatDP, Ding et al., "Detecting Violations of Differential Privacy",
CCS 2018, Section 5.2; DP-Sniper, Bichsel et al., S&P 2021, Section VI): one answer up, one
down, all up, all down, half up and half down, one up and the rest down, one down and the
rest up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["NeighbouringPair", "query_pairs", "resolve_pairs"]


@dataclass(frozen=True, eq=False)
class NeighbouringPair:
    """Two neighbouring datasets and a name for them.

    Attributes:
        d0: the first dataset.
        d1: its neighbour.
        name: a short description such as ``"one answer up"``.
    """

    d0: Any
    d1: Any
    name: str = "d0 vs d1"

    def describe(self) -> str:
        """The pair in words, with the datasets when they are short."""
        return f"{self.name}: d0={_short(self.d0)}, d1={_short(self.d1)}"


def _short(data: Any) -> str:
    text = np.array2string(data, threshold=12) if isinstance(data, np.ndarray) else repr(data)
    return text if len(text) <= 80 else text[:77] + "..."


#: Most query answers :func:`query_pairs` builds patterns for (each pattern is two arrays of
#: ``length`` floats).
MAX_QUERIES = 1_000_000


def query_pairs(
    length: int, *, base: float = 0.0, sensitivity: float = 1.0
) -> tuple[NeighbouringPair, ...]:
    """The standard neighbouring patterns for ``length`` query answers.

    Args:
        length: number of queries, >= 1.
        base: the answer of every query in d0.
        sensitivity: how far each answer moves in d1 (> 0).

    Returns:
        Named pairs (d0 is always ``base`` everywhere). Patterns that coincide for short
        vectors are listed once.

    Raises:
        ValueError: if ``length < 1`` or ``sensitivity <= 0``.
    """
    if isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= MAX_QUERIES:
        raise ValueError(
            f"length must be an integer in [1, {MAX_QUERIES}] (MAX_QUERIES), got {length!r}"
        )
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be > 0, got {sensitivity!r}")
    d0 = np.full(length, float(base))
    s = float(sensitivity)
    rest = np.ones(length - 1)
    half = length // 2
    patterns = {
        "one answer up": np.r_[s, 0 * rest],
        "one answer down": np.r_[-s, 0 * rest],
        "all answers up": np.full(length, s),
        "all answers down": np.full(length, -s),
        "half up, half down": np.r_[np.full(half, s), np.full(length - half, -s)],
        "one up, the rest down": np.r_[s, -s * rest],
        "one down, the rest up": np.r_[-s, s * rest],
    }
    pairs: list[NeighbouringPair] = []
    seen: list[np.ndarray] = []
    for name, shift in patterns.items():
        if any(np.array_equal(shift, t) for t in seen):
            continue
        seen.append(shift)
        pairs.append(NeighbouringPair(d0, d0 + shift, name))
    return tuple(pairs)


def resolve_pairs(
    d0: Any, d1: Any, pairs: Iterable[NeighbouringPair | Sequence[Any]] | None
) -> tuple[NeighbouringPair, ...]:
    """Normalise the ``d0, d1, pairs=`` arguments of the auditor into a tuple of pairs.

    Args:
        d0: first dataset, or None when ``pairs`` is given.
        d1: second dataset, or None when ``pairs`` is given.
        pairs: candidate pairs (``NeighbouringPair`` or ``(d0, d1)`` tuples), or None.

    Returns:
        The pairs to search; ``(d0, d1)`` comes first when given.

    Raises:
        ValueError: if neither a full pair nor a non-empty ``pairs`` is given, or only one of
            d0, d1 is given.
    """
    found: list[NeighbouringPair] = []
    if (d0 is None) != (d1 is None):
        raise ValueError(
            "d0 and d1 must be given together (or both None with pairs=...), got only "
            + ("d1" if d0 is None else "d0")
        )
    if d0 is not None:
        found.append(NeighbouringPair(d0, d1))
    for p in pairs or ():
        if isinstance(p, NeighbouringPair):
            found.append(p)
        elif isinstance(p, Sequence) and len(p) == 2:
            found.append(NeighbouringPair(p[0], p[1], f"pair {len(found)}"))
        else:
            raise ValueError(
                f"pairs must hold NeighbouringPair objects or (d0, d1) tuples, got {p!r}"
            )
    if not found:
        raise ValueError("no datasets to compare: give d0 and d1, or a non-empty pairs=...")
    return tuple(found)
