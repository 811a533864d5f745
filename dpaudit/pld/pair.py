"""Both neighbouring directions of a privacy loss distribution.

Under the add/remove relation a mechanism's guarantee is the worse of the two directions
(removing a record from D, or adding one), which differ for subsampled mechanisms.  A
:class:`PLDPair` carries both and composes them side by side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dpaudit.pld.distribution import PrivacyLossDistribution

__all__ = ["PLDPair"]


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

    def self_compose(self, count: int) -> PLDPair:
        """``count`` independent copies composed (see :meth:`PrivacyLossDistribution.self_compose`).

        Raises:
            ValueError: if count is not an integer >= 1 or the support grows too large.
        """
        return self._both(lambda d: d.self_compose(count))

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

    def epsilon_bounds(self, delta: float) -> tuple[float, float]:
        """Certified ``(lower, upper)`` bounds on the epsilon of the pair at ``delta``.

        Raises:
            ValueError: if delta is not in [0, 1].
        """
        lo_r, hi_r = self.remove.epsilon_bounds(delta)
        if self.symmetric:
            return lo_r, hi_r
        lo_a, hi_a = self.add.epsilon_bounds(delta)
        return max(lo_r, lo_a), max(hi_r, hi_a)

    def delta_bounds(self, epsilon: float) -> tuple[float, float]:
        """Certified ``(lower, upper)`` bounds on delta at ``epsilon``.

        Raises:
            ValueError: if epsilon is not a real number.
        """
        lo_r, hi_r = self.remove.delta_bounds(epsilon)
        if self.symmetric:
            return lo_r, hi_r
        lo_a, hi_a = self.add.delta_bounds(epsilon)
        return max(lo_r, lo_a), max(hi_r, hi_a)
