"""The PLD grid refinement (``currencies.refined_epsilon_bounds``): which grids it builds.

Fakes stand for PLDs here (the rule only reads ``h``, ``budgeted`` and ``epsilon_bounds``): a
composition
whose certified gap shrinks like h^2 (one composition's discretisation) and one whose gap
shrinks like h^0.5 (a thousand distinct DP-SGD phases measured about that), so the grid
sequence is checked exactly, without building PLDs.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

from dpaudit.accountant import currencies as cur


@dataclasses.dataclass
class FakePLD:
    h: float
    order: float
    budgeted: bool = False

    def epsilon_bounds(self, delta: float, *, reserve: bool = True) -> tuple[float, float]:
        # on the coarsest grid the gap is 3.4 times the target (as for 1000 DP-SGD phases)
        half = 0.5 * 3.4 * cur.TARGET_GAP * 10.0 * (self.h / cur.COARSEST_GRID) ** self.order
        return 10.0 - half, 10.0 + half


def grids(order: float) -> tuple[list[float], tuple[float, float, float] | None]:
    built: list[float] = []

    def build(h: float) -> FakePLD:
        built.append(h)
        return FakePLD(h, order)

    return built, cur.refined_epsilon_bounds(build, 1e-6)


def test_a_gap_shrinking_like_h_squared_refines_step_by_step() -> None:
    built, found = grids(2.0)
    assert built[0] == cur.COARSEST_GRID
    assert all(b < a for a, b in itertools.pairwise(built))
    assert found is not None and found[2] == built[-1]
    lo, hi, _ = found
    assert hi - lo <= cur.TARGET_GAP * hi or built[-1] == cur.FINEST_GRID


def test_a_slowly_shrinking_gap_goes_to_the_finest_grid_without_intermediate_grids() -> None:
    """Gap ~ h^0.5: after two grids the rule sees the order and jumps to the finest grid
    (assuming h^2 it built 1e-3, 3.8e-4, 1.8e-4 and then the finest, 1e-4)."""
    built, found = grids(0.5)
    assert len(built) == 3 and built[0] == cur.COARSEST_GRID
    assert 3e-4 < built[1] < 4e-4
    assert built[2] == cur.FINEST_GRID
    assert found is not None and math.isclose(found[2], cur.FINEST_GRID)


def test_a_composition_in_blocks_on_a_coarser_grid_is_still_refined() -> None:
    """A composition in blocks (dpaudit.pld.blocks) ends on a grid 16 times the leaf's, which a
    finer leaf refines: the rule goes on refining and reports the leaf grid; one coarsened to
    fit the grid budget (``budgeted``) stops after the first grid, as a finer leaf would be
    coarsened the same way."""
    for budgeted in (False, True):
        built: list[float] = []

        def build(h: float, budgeted: bool = budgeted, built: list[float] = built) -> FakePLD:
            built.append(h)
            return FakePLD(16 * h, 2.0, budgeted)

        found = cur.refined_epsilon_bounds(build, 1e-6)
        assert found is not None
        if budgeted:
            assert built == [cur.COARSEST_GRID] and found[2] == 16 * cur.COARSEST_GRID
        else:
            assert len(built) > 1 and found[2] == built[-1]
