"""Both neighbouring directions of a privacy loss distribution.

Under the add/remove relation a mechanism's guarantee is the worse of the two directions
(removing a record from D, or adding one), which differ for subsampled mechanisms.  A
:class:`PLDPair` carries both and composes them side by side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from dpaudit.pld.blocks import self_compose_blocked
from dpaudit.pld.distribution import PrivacyLossDistribution

__all__ = ["CHUNK_BYTES", "PLDPair"]

#: The most bytes of parts' arrays :meth:`PLDPair.compose_stream` holds at once.  A thousand
#: distinct DP-SGD phases on a 1e-4 grid hold about 5 GB of parts (both directions, both
#: sides) if they all wait for one product of spectra; in chunks of this size they hold a
#: chunk and one composed PLD per chunk done.
CHUNK_BYTES = 192 * 2**20


@dataclasses.dataclass(frozen=True)
class PLDPair:
    """The PLDs of the two directions (``remove`` and ``add``); identical for symmetric pairs.

    Privacy: ``epsilon_bounds(delta) = (lo, hi)`` with
    ``lo <= max(eps_remove(delta), eps_add(delta)) <= hi``, the smallest epsilon for which the
    composed mechanism is (epsilon, delta)-DP in both directions.
    """

    remove: PrivacyLossDistribution
    add: PrivacyLossDistribution

    @property
    def symmetric(self) -> bool:
        """Whether both directions are the same object."""
        return self.remove is self.add

    @property
    def h(self) -> float:
        """The grid step."""
        return self.remove.h

    def _both(self, fn: Callable[[PrivacyLossDistribution], PrivacyLossDistribution]) -> PLDPair:
        remove = fn(self.remove)
        add = remove if self.symmetric else fn(self.add)
        return PLDPair(remove, add)

    @property
    def budgeted(self) -> bool:
        """Whether a composition that made either direction outgrew the grid budget (see
        :attr:`PrivacyLossDistribution.budgeted`)."""
        return self.remove.budgeted or self.add.budgeted

    def self_compose(self, count: int) -> PLDPair:
        """``count`` independent copies composed: in one transform, or in blocks moved to a
        coarser grid where that is cheaper (:func:`dpaudit.pld.blocks.self_compose_blocked`;
        the result's grid step is then a power of 2 times this one's).

        Raises:
            ValueError: if count is not an integer >= 1 or the support grows too large.
        """
        return self._both(lambda d: self_compose_blocked(d, count))

    def coarsened(self, g: int) -> PLDPair:
        """Both directions on the grid of step ``g h`` (``g`` a power of 2; see
        :meth:`PrivacyLossDistribution.coarsened`): bounds stay certified, and looser.

        Raises:
            ValueError: if g is not a power of 2.
        """
        return self._both(lambda d: d.coarsened(g))

    def compose(self, other: PLDPair) -> PLDPair:
        """This mechanism followed by ``other``.

        Raises:
            ValueError: if ``other`` is not a PLDPair or the grid steps differ by other than
                a power of 2 (the finer is coarsened to the coarser).
        """
        if not isinstance(other, PLDPair):
            raise ValueError(f"other must be a PLDPair, got {type(other).__name__}")
        if self.symmetric and other.symmetric:
            d = self.remove.compose(other.remove)
            return PLDPair(d, d)
        return PLDPair(self.remove.compose(other.remove), self.add.compose(other.add))

    @staticmethod
    def compose_many(pairs: list[PLDPair]) -> PLDPair:
        """The pairs composed in order, in one product of spectra per direction (see
        :mod:`dpaudit.pld.many`): N distinct parts cost N transforms and one window search.

        Raises:
            ValueError: if ``pairs`` is empty, holds something else than PLDPairs, or their grid
                steps differ by other than powers of 2.
        """
        from dpaudit.pld.many import compose_many

        if not pairs or not all(isinstance(p, PLDPair) for p in pairs):
            raise ValueError("compose_many needs a non-empty list of PLDPairs")
        remove = compose_many([p.remove for p in pairs])
        if all(p.symmetric for p in pairs):
            return PLDPair(remove, remove)
        return PLDPair(remove, compose_many([p.add for p in pairs]))

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays of both directions (once when they are one object)."""
        sides = (self.remove,) if self.remove is self.add else (self.remove, self.add)
        return sum(d.upper.masses.nbytes + d.lower.p.nbytes + d.lower.qt.nbytes for d in sides)

    @staticmethod
    def compose_stream(pairs: Iterable[PLDPair], chunk_bytes: int = CHUNK_BYTES) -> PLDPair:
        """The pairs composed in order, consuming ``pairs`` lazily in bounded memory.

        Parts are gathered until their arrays exceed ``chunk_bytes``; each such chunk is
        composed in one product of spectra (:meth:`compose_many`) and released, and the
        chunks' results are composed the same way at the end.  Up to ``chunk_bytes`` this is
        exactly :meth:`compose_many` of all the parts.  Beyond, neither the chunks' results
        nor the final one keep a pending tilted refinement (:mod:`dpaudit.pld.tilt`), which
        would hold their inputs' arrays: their untilted bounds are certified, and the
        refinement only tightens profiles at deltas near the FFT's rounding mass (about
        1e-10 and below).  Chunking is sound: composition is
        associative (the composition of dominating pairs dominates, Zhu, Dong, Wang 2022,
        Theorem 10; the lower side is a post-processing of the product pair), and each chunk
        adds its own window and rounding terms, which are certified like every other.

        Raises:
            ValueError: as :meth:`compose_many` (empty input, a part that is not a PLDPair,
                grid steps that differ by other than powers of 2).
        """
        if chunk_bytes < 1:
            raise ValueError(f"chunk_bytes must be a positive integer, got {chunk_bytes!r}")
        done: list[PLDPair] = []
        chunk: list[PLDPair] = []
        held = 0
        for pair in pairs:
            if not isinstance(pair, PLDPair):
                raise ValueError(f"parts must be PLDPairs, got {type(pair).__name__}")
            chunk.append(pair)
            held += pair.nbytes
            if held > chunk_bytes:
                done.append(PLDPair.compose_many(chunk)._settled())
                chunk, held = [], 0
        if not done:
            return PLDPair.compose_many(chunk)
        if chunk:
            done.append(PLDPair.compose_many(chunk)._settled())
        return PLDPair.compose_many(done)._settled()

    def _settled(self) -> PLDPair:
        """This pair without its pending tilted refinement (:mod:`dpaudit.pld.tilt`), which
        holds every input part's arrays until a query needs it: a chunk's result is only
        composed further, and keeping the refinement would keep the whole chunk in memory.
        Its untilted bounds are certified; the final product has its own refinement."""
        remove = dataclasses.replace(self.remove, pending=None)
        if self.remove is self.add:
            return PLDPair(remove, remove)
        return PLDPair(remove, dataclasses.replace(self.add, pending=None))

    def epsilon_bounds(self, delta: float, *, reserve: bool = True) -> tuple[float, float]:
        """Certified ``(lower, upper)`` bounds on the epsilon of the pair at ``delta``
        (``reserve``: see :meth:`PrivacyLossDistribution.epsilon_bounds`).

        Raises:
            ValueError: if delta is not in [0, 1].
        """
        lo_r, hi_r = self.remove.epsilon_bounds(delta, reserve=reserve)
        if self.symmetric:
            return lo_r, hi_r
        lo_a, hi_a = self.add.epsilon_bounds(delta, reserve=reserve)
        return max(lo_r, lo_a), max(hi_r, hi_a)

    def delta_bounds(self, epsilon: float, *, reserve: bool = True) -> tuple[float, float]:
        """Certified ``(lower, upper)`` bounds on delta at ``epsilon`` (``reserve``: see
        :meth:`PrivacyLossDistribution.epsilon_bounds`).

        Raises:
            ValueError: if epsilon is not a real number.
        """
        lo_r, hi_r = self.remove.delta_bounds(epsilon, reserve=reserve)
        if self.symmetric:
            return lo_r, hi_r
        lo_a, hi_a = self.add.delta_bounds(epsilon, reserve=reserve)
        return max(lo_r, lo_a), max(hi_r, hi_a)
