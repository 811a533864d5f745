"""Conformance suites every event and every primitive inherits (pytest classes).

Subclass :class:`EventConformance` in a test module and fill in the hooks; the inherited
tests check what every event/accountant pair must satisfy:

* invalid parameters raise ``ValueError`` naming the parameter (matched by regex);
* events are immutable and their expressions parse back to equal events;
* composing an event k times at once equals composing it once k times (two peer
  accountants have shipped exactly that bug);
* reported epsilons are upper bounds rounded up, at least any certified lower bound;
* guarantees are monotone in the parameters (a "stronger" event never costs less).

Subclass :class:`PrimitiveConformance` for runnable primitives: each run is recorded once in
the ledger (n times for a batch of n), results are reproducible under a seed, batches have
the right shape, and a non-Generator rng is refused.

These classes are named without a ``Test`` prefix so pytest collects only subclasses.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import sympy

from dpaudit.accountant import Accountant
from dpaudit.events import Composed, Event, SelfComposed

__all__ = ["EventConformance", "PrimitiveConformance"]

#: The deltas at which conformance properties are checked (None: the natural guarantee).
DELTAS: tuple[Any, ...] = (None, "1e-6")
#: Composition counts checked by the k-at-once = k-times property.
COUNTS: tuple[int, ...] = (1, 2, 5)
#: Relative tolerance between two routes to the same exact value (interval solving).
REL_TOL = 1e-9
#: Digits of the independent evaluation an epsilon_upper is checked against, and the
#: relative slack allowed for that evaluation's own rounding (far below a float's 1e-16).
EVALF_DIGITS = 60
EVALF_SLACK_DIGITS = 45


@functools.lru_cache(maxsize=4096)
def _epsilon(event: Event, delta: Any) -> float | None:
    try:
        return Accountant().guarantee(event, delta).epsilon_upper
    except ValueError:
        return None


class EventConformance:
    """Inherit in a ``Test...`` class and implement the hooks below."""

    #: Deltas at which this event has a guarantee (override for events needing delta > 0).
    deltas: tuple[Any, ...] = DELTAS

    def examples(self) -> Sequence[Event]:
        """Valid numeric events of the kind under test."""
        raise NotImplementedError

    def invalid(self) -> Sequence[tuple[Callable[[], Any], str]]:
        """(constructor call, regex its ValueError must match) for invalid parameters."""
        raise NotImplementedError

    def monotone_pairs(self) -> Sequence[tuple[Event, Event]]:
        """(cheaper, costlier) pairs: the first's epsilon must not exceed the second's."""
        return ()

    # ---- inherited tests ---------------------------------------------------------------

    def test_invalid_parameters_raise_clear_errors(self) -> None:
        cases = self.invalid()
        assert cases, "a conformance class must list invalid parameter cases"
        for make, pattern in cases:
            with pytest.raises(ValueError, match=pattern):
                make()

    def test_events_are_immutable(self) -> None:
        for event in self.examples():
            field = dataclasses.fields(event)[0]
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(event, field.name, getattr(event, field.name))

    def test_expression_round_trips(self) -> None:
        from dpaudit.parse import parse_event

        for event in self.examples():
            text = event.expression()
            parsed = parse_event(text)
            # floats are shown by their shortest repr, which parses as that decimal: compare
            # through the accountant when the parse is not identical
            if parsed != event:
                for delta in self.deltas:
                    a, b = _epsilon(parsed, delta), _epsilon(event, delta)
                    assert a is not None and b is not None
                    assert a == pytest.approx(b, rel=1e-12)

    def test_composing_k_at_once_equals_k_times(self) -> None:
        for event in self.examples():
            for delta in self.deltas:
                for k in COUNTS:
                    at_once = _epsilon(SelfComposed(event, k), delta)
                    one_by_one = _epsilon(Composed([event] * k), delta)
                    assert at_once is not None, f"{event} x {k} at delta={delta} unsupported"
                    assert one_by_one is not None
                    assert at_once == pytest.approx(one_by_one, rel=REL_TOL), (
                        f"SelfComposed({event}, {k}) = {at_once} but composing it {k} times "
                        f"gives {one_by_one} at delta={delta}"
                    )

    def test_epsilon_is_rounded_up_and_above_certified_lower_bound(self) -> None:
        for event in self.examples():
            for delta in self.deltas:
                g = Accountant().guarantee(event, delta)
                up = g.epsilon_upper
                assert up is not None
                if g.epsilon == sympy.oo:
                    assert up == math.inf
                    continue
                # checked against an independent evaluation of the exact epsilon (sympy's
                # evalf at EVALF_DIGITS digits, not the interval arithmetic behind
                # epsilon_upper): the smallest float at or above it, i.e. rounded up, not to
                # nearest and not loosely
                value = sympy.Rational(sympy.N(g.epsilon, EVALF_DIGITS))
                slack = sympy.Rational(1, 10**EVALF_SLACK_DIGITS) * abs(value)
                assert sympy.Rational(up) >= value - slack, (
                    f"{event} at delta={delta}: epsilon_upper {up!r} < epsilon {value}"
                )
                below = math.nextafter(up, -math.inf)
                assert sympy.Rational(below) < value + slack, (
                    f"{event} at delta={delta}: epsilon_upper {up!r} is not the smallest "
                    f"float >= epsilon {value}"
                )
                if g.epsilon_lower is not None:
                    low = g.epsilon_lower_float
                    assert low is not None and low <= up, f"{event}: lower {low} > upper {up}"

    def test_composition_is_monotone_in_count(self) -> None:
        for event in self.examples():
            for delta in self.deltas:
                found = [_epsilon(SelfComposed(event, k), delta) for k in COUNTS]
                values = [v for v in found if v is not None]
                assert len(values) == len(found), f"{event} at delta={delta}: {found}"
                assert all(a <= b * (1 + REL_TOL) for a, b in itertools.pairwise(values))

    def test_monotone_in_parameters(self) -> None:
        for cheaper, costlier in self.monotone_pairs():
            for delta in self.deltas:
                a, b = _epsilon(cheaper, delta), _epsilon(costlier, delta)
                assert a is not None and b is not None
                assert a <= b * (1 + REL_TOL), f"{cheaper}: {a} > {costlier}: {b}"


class PrimitiveConformance:
    """Inherit in a ``Test...`` class and implement :meth:`make` and :meth:`run`."""

    def make(self) -> Any:
        """A primitive instance."""
        raise NotImplementedError

    def run(self, primitive: Any, rng: np.random.Generator, size: int | None) -> Any:
        """Run the primitive once (``size=None``) or as a batch of ``size``."""
        raise NotImplementedError

    def test_each_run_is_recorded_once(self) -> None:
        from dpaudit.ledger import Ledger

        prim = self.make()
        with Ledger() as ledger:
            self.run(prim, np.random.default_rng(0), None)
        assert [e.event for e in ledger.entries] == [prim.event]
        assert ledger.entries[0].count == 1

    def test_a_batch_is_recorded_as_its_size(self) -> None:
        from dpaudit.ledger import Ledger

        prim = self.make()
        with Ledger() as ledger:
            out = self.run(prim, np.random.default_rng(0), 5)
        assert len(out) == 5
        assert ledger.entries[0].count == 5

    def test_reproducible_under_a_seed(self) -> None:
        prim = self.make()
        a = self.run(prim, np.random.default_rng(123), 20)
        b = self.run(prim, np.random.default_rng(123), 20)
        assert np.array_equal(np.asarray(a), np.asarray(b))

    def test_refuses_a_non_generator_rng(self) -> None:
        prim = self.make()
        with pytest.raises(ValueError, match=r"rng must be a numpy\.random\.Generator"):
            self.run(prim, 42, None)  # type: ignore[arg-type]  # the wrong type on purpose

    def test_exposes_its_event(self) -> None:
        prim = self.make()
        assert isinstance(prim.event, Event)
        assert Accountant().guarantee(prim.event, "1e-6").epsilon_upper is not None
