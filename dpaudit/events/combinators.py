"""Inner events: ways of combining mechanisms.

A combinator's neighbouring relation is its children's; children stated under different
relations are refused (``ValueError``) rather than guessed.  Subsampling combinators state
the relation their amplification theorems need of the inner mechanism and the relation the
result is stated under.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from dpaudit.events.base import Event, Relation, _format_value, ranged, validate_ranges

__all__ = [
    "Combination",
    "Composed",
    "Group",
    "Parallel",
    "PoissonSampled",
    "PostProcessed",
    "SampledWithoutReplacement",
    "SelfComposed",
    "Wrapper",
]


def _event_tuple(owner: str, events: Iterable[Any]) -> tuple[Event, ...]:
    if isinstance(events, Event):
        raise ValueError(
            f"{owner}: events must be a list of events, got the single event "
            f"{events}; use {owner}([...])"
        )
    try:
        items = tuple(events)
    except TypeError:
        raise ValueError(f"{owner}: events must be a list of events, got {events!r}") from None
    if not items:
        raise ValueError(f"{owner}: events must be a non-empty list of events, got []")
    for i, item in enumerate(items):
        if not isinstance(item, Event):
            raise ValueError(f"{owner}: events[{i}] must be an event, got {item!r}")
    relations = {e.relation for e in items}
    if len(relations) > 1:
        detail = "; ".join(f"{e} is {e.relation.value}" for e in items)
        raise ValueError(
            f"{owner}: all events must share one neighbouring relation, got a mix ({detail})"
        )
    return items


def _one_event(owner: str, event: Any) -> Event:
    if not isinstance(event, Event):
        raise ValueError(f"{owner}: event must be an event, got {event!r}")
    return event


@dataclasses.dataclass(frozen=True)
class Wrapper(Event):
    """A combinator around one event.

    Its relation and only child are the inner event's (subclasses that change the relation
    override :attr:`relation`); its expression lists the inner event, then the other fields
    positionally.  Subclasses add their own fields and checks (calling ``super().__post_init__``
    first).
    """

    event: Event = dataclasses.field(metadata={"positional": True})

    def __post_init__(self) -> None:
        self._set("event", _one_event(self.kind, self.event))
        validate_ranges(self)

    @property
    def relation(self) -> Relation:
        return self.event.relation

    def children(self) -> tuple[Event, ...]:
        return (self.event,)

    def expression(self) -> str:
        rest = [_format_value(getattr(self, f.name)) for f in dataclasses.fields(self)[1:]]
        return f"{self.kind}({', '.join([self.event.expression(), *rest])})"


@dataclasses.dataclass(frozen=True)
class Combination(Event):
    """A combinator over a non-empty list of events sharing one neighbouring relation."""

    # given as any sequence of events (a list, usually), stored as a tuple
    events: Sequence[Event] = dataclasses.field(metadata={"positional": True})

    def __post_init__(self) -> None:
        self._set("events", _event_tuple(self.kind, self.events))

    @property
    def relation(self) -> Relation:
        return self.events[0].relation

    def children(self) -> tuple[Event, ...]:
        return tuple(self.events)  # the stored tuple itself


@dataclasses.dataclass(frozen=True)
class Composed(Combination):
    """Adaptive sequential composition: the mechanisms run one after another on the same
    dataset, each possibly chosen from the outputs of the previous ones."""


@dataclasses.dataclass(frozen=True)
class SelfComposed(Wrapper):
    """``count``-fold adaptive composition of one mechanism with itself."""

    count: Any = ranged(low=1, low_open=False, integer=True)


#: How :class:`Parallel` partitions the dataset.
PARTITIONS = ("values", "positions")


@dataclasses.dataclass(frozen=True)
class Parallel(Combination):
    """Parallel composition: each mechanism runs on its own part of a partition of the
    dataset (McSherry 2009).

    ``partition`` says what the partition is fixed on, which decides what one replaced
    record can change:

    * ``"values"`` (default): a partition of the record domain (histogram bins, the records
      with age < 30, ...).  Under replace-one a record may be replaced by one of another
      part, which changes two parts.
    * ``"positions"``: a partition of the records' positions fixed independently of the
      data (by index, or by a random permutation drawn independently of the data, as phased
      SGD's disjoint batches).  Replace-one neighbours differ at one position, which lies in
      one part.  Defined under replace-one only (adding or removing a record shifts the
      positions after it); under add/remove a record is in one part whatever the partition,
      so ``"values"`` already gives the worst part's guarantee.
    """

    partition: str = dataclasses.field(default="values", metadata={"choices": PARTITIONS})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.partition not in PARTITIONS:
            raise ValueError(
                f"Parallel: partition must be one of {', '.join(map(repr, PARTITIONS))}, "
                f"got {self.partition!r}"
            )
        if self.partition == "positions" and self.relation is not Relation.REPLACE_ONE:
            raise ValueError(
                "Parallel: partition='positions' is defined under replace_one only, got events "
                f"under {self.relation.value} (under add_remove use the default 'values': a "
                "record lies in one part either way)"
            )


@dataclasses.dataclass(frozen=True)
class PostProcessed(Wrapper):
    """Any data-independent function of a mechanism's output."""


@dataclasses.dataclass(frozen=True)
class Group(Wrapper):
    """The mechanism's guarantee for datasets differing in up to ``size`` records."""

    size: Any = ranged(low=1, low_open=False, integer=True)


@dataclasses.dataclass(frozen=True)
class PoissonSampled(Wrapper):
    """Poisson subsampling: each record enters the sample independently with probability
    ``rate``, then the mechanism runs on the sample.

    The amplification theorems for Poisson sampling are stated for the add/remove relation
    (Balle, Barthe, Gaboardi 2018, Theorem 8; Mironov, Talwar, Zhang 2019), so the inner
    event must be stated under add/remove; the result is under add/remove.
    """

    rate: Any = ranged(low=0, high=1, high_open=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.event.relation is not Relation.ADD_REMOVE:
            raise ValueError(
                f"PoissonSampled: event must be stated under the add_remove relation "
                f"(Poisson amplification needs it), got {self.event} under "
                f"{self.event.relation.value}"
            )

    @property
    def relation(self) -> Relation:
        return Relation.ADD_REMOVE


@dataclasses.dataclass(frozen=True)
class SampledWithoutReplacement(Wrapper):
    """Sampling ``sample`` records uniformly without replacement out of ``population``, then
    running the mechanism on the sample.

    The amplification theorems for this scheme are stated for the replace-one relation on
    datasets of the fixed size ``population`` (Balle, Barthe, Gaboardi 2018, Theorem 9; Wang,
    Balle, Kasiviswanathan 2019), so the inner event must be replace-one, as is the result.
    """

    sample: Any = ranged(low=1, low_open=False, integer=True)
    population: Any = ranged(low=1, low_open=False, integer=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        from dpaudit.events.base import _truth

        if _truth(self.sample <= self.population) is False:
            raise ValueError(
                f"SampledWithoutReplacement: sample must be in [1, population] = "
                f"[1, {self.population}], got {self.sample}"
            )
        if self.event.relation is not Relation.REPLACE_ONE:
            raise ValueError(
                f"SampledWithoutReplacement: event must be stated under the replace_one "
                f"relation (its amplification theorem needs it), got {self.event} under "
                f"{self.event.relation.value}"
            )

    @property
    def relation(self) -> Relation:
        return Relation.REPLACE_ONE
