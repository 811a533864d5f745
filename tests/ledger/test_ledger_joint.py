"""mechanisms.ledger.recorded_jointly: the runs of a combination of primitives recorded as the
one event its proof covers, and nothing hidden when the combination did not run whole."""

from __future__ import annotations

import dpaudit.events as ev
from mechanisms.ledger import Ledger, record, recorded_jointly

SEL = ev.Exponential("1/2", 1, relation=ev.Relation.REPLACE_ONE)
VOTE = ev.Exponential("1/4", 1, relation=ev.Relation.REPLACE_ONE)
JOINT = ev.PureDP(2)


def _events(ledger: Ledger) -> list[tuple[ev.Event, int]]:
    return [(e.event, e.count) for e in ledger.entries]


def test_both_parts_are_recorded_as_the_joint_event_and_the_rest_passes() -> None:
    other = ev.Laplace(1)
    with Ledger() as ledger, recorded_jointly((SEL, VOTE), JOINT):
        record(VOTE)
        record(other)
        record(SEL)
    assert _events(ledger) == [(JOINT, 1), (other, 1)]


def test_equal_parts_need_one_run_each() -> None:
    with Ledger() as ledger, recorded_jointly((SEL, SEL), JOINT):
        record(SEL, 3)
    assert _events(ledger) == [(JOINT, 1), (SEL, 1)]


def test_a_missing_part_leaves_every_run_as_it_ran() -> None:
    with Ledger() as ledger, recorded_jointly((SEL, VOTE), JOINT):
        record(SEL)
    assert _events(ledger) == [(SEL, 1)]


def test_nothing_is_recorded_without_an_active_ledger() -> None:
    with recorded_jointly((SEL, VOTE), JOINT):
        record(SEL)
        record(VOTE)
    with Ledger() as ledger:
        pass
    assert ledger.entries == []
