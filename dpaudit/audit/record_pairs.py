"""Candidate neighbouring pairs over a record domain, for :func:`dpaudit.audit.audit_records`.

* :func:`structured`: the structured candidates, most promising first. Ordinary records
  first: the all-low and all-high records exchanged, in datasets of one record (or none for
  add/remove), of equal records, of duplicates and of mixed low/high records; with edge
  values, the first :data:`EARLY_EDGES` edge records
  (:meth:`~dpaudit.audit.domain.RecordDomain.edge_records`: NaN, then +inf and -inf) as the
  differing record of the smallest dataset are interleaved with the first ordinary
  candidates (second, fourth and sixth), so that a search that scores only a few candidates
  (a slow function under a time budget, or a small ``samples``) tries NaN; then the other
  edge records (values outside the declared range, ...) in the smallest dataset; then the
  centre and zero records, the corners of the box and one column at a time at its other
  extreme; then the edge records in larger datasets, as the differing record and as the rest
  of the dataset. An ordinary bug is found by the first block, at the cost it had before
  edge values were tried plus at most :data:`EARLY_EDGES` candidates.
* :func:`perturb`: a move of the local search (a record moved towards a corner, an edge or,
  with edge values, onto an edge value; the other records made equal or duplicated; the
  dataset resized).

Every pair either generates is neighbouring under its relation and its datasets' sizes lie
in the sizes searched (the property tests check it); records hold values of the domain or,
with edge values, edge values of their columns.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from dpaudit.audit.domain import RecordDomain, as_records

__all__ = [
    "CORNER_LIMIT",
    "EARLY_EDGES",
    "EDGE_LIMIT",
    "CandidatePair",
    "json_rows",
    "pair_key",
    "perturb",
    "rows",
    "structured",
]

#: Corners of the domain's box tried as differing records (all of them when there are fewer).
CORNER_LIMIT = 16
#: Edge records tried by the structured candidates (:meth:`RecordDomain.edge_records`).
EDGE_LIMIT = 24
#: Edge records of the smallest dataset tried among the first candidates, one after each of
#: the first ordinary ones: NaN (it passes np.clip and every comparison: the most common real
#: bug the panel found), +inf and -inf (they overflow sums and bounds).
EARLY_EDGES = 3


@dataclass(frozen=True, eq=False)
class CandidatePair:
    """A neighbouring pair: ``base`` (d0) and, for replace-one, ``base`` with row ``index``
    replaced by ``record``; for add-remove, ``base`` with ``record`` added.

    Attributes:
        base: the first dataset (2-D, one row per record).
        record: the record replacing row ``index`` or added.
        index: the row replaced (None: ``record`` is added).
        name: how the pair was built, in words.
    """

    base: np.ndarray
    record: np.ndarray
    index: int | None
    name: str

    def datasets(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """The two datasets, read-only 2-D float arrays of ``width`` columns."""
        if self.index is None:
            return as_records(self.base, width), as_records(
                np.vstack([self.base, self.record[None, :]]), width
            )
        d1 = self.base.copy()
        d1[self.index] = self.record
        return as_records(self.base, width), as_records(d1, width)


def rows(data: np.ndarray) -> str:
    """A dataset on one line: its size and rows (shortened when long)."""
    text = np.array2string(data, separator=",", threshold=12, edgeitems=2)
    text = "".join(text.split())
    return f"{len(data)} record(s) {text if len(text) <= 120 else text[:117] + '...'}"


def json_rows(data: np.ndarray) -> list[list[float | str]]:
    """A dataset as JSON-ready rows: NaN and infinities as "nan", "inf", "-inf"."""
    return [[v if math.isfinite(v) else str(v) for v in row] for row in data.tolist()]


def pair_key(d0: np.ndarray, d1: np.ndarray) -> tuple[bytes, bytes]:
    """The same key for a pair in either order (both directions are always certified)."""
    a, b = d0.tobytes() + bytes([len(d0) % 256]), d1.tobytes() + bytes([len(d1) % 256])
    return (a, b) if (len(d0), a) <= (len(d1), b) else (b, a)


def _opposite(domain: RecordDomain, record: np.ndarray) -> np.ndarray:
    return np.array(
        [c.high if v == c.low else c.low for c, v in zip(domain.columns, record, strict=True)]
    )


def _records(k: int, kind: str) -> str:
    """``k`` records of a kind, in words ("an edge record", "3 edge records")."""
    return f"an {kind} record" if k == 1 else f"{k} {kind} records"


def _copies(record: np.ndarray, s: int, width: int) -> np.ndarray:
    return np.tile(record, (s, 1)).reshape(s, width)


def _interleaved(
    ordinary: Iterator[CandidatePair], early: list[CandidatePair]
) -> Iterator[CandidatePair]:
    """``ordinary`` with the ``early`` candidates put one after each of its first ones."""
    pending = iter(early)
    for candidate in ordinary:
        yield candidate
        yield from itertools.islice(pending, 1)
    yield from pending


def _replace_one(
    domain: RecordDomain, sizes: tuple[int, int], rng: np.random.Generator, edge_values: bool
) -> Iterator[CandidatePair]:
    low, high, centre, zero = domain.low(), domain.high(), domain.centre(), domain.zero()
    width = domain.width
    lo, smax = max(1, sizes[0]), sizes[1]
    counts = sorted({lo, min(lo + 1, smax), smax})

    def mixed(s: int) -> np.ndarray:
        return np.array([low if i % 2 == 0 else high for i in range(s)]).reshape(s, width)

    def replaced(start: np.ndarray, target: np.ndarray, s: int) -> CandidatePair:
        name = "one record replaced" if s == 1 else f"{s} equal records, one replaced"
        return CandidatePair(_copies(start, s, width), target, s - 1, name)

    def exchanged() -> Iterator[CandidatePair]:
        """The all-low and all-high records exchanged, in every kind of dataset."""
        for start, target in ((low, high), (high, low)):
            for s in counts:
                yield replaced(start, target, s)
                rest = np.vstack([_copies(target, s - 1, width), start[None, :]])
                yield CandidatePair(rest, target, s - 1, f"{s} records, one replaced")
                yield CandidatePair(
                    np.vstack([mixed(s - 1), start[None, :]]),
                    target,
                    s - 1,
                    f"{s} mixed records, one replaced",
                )

    edges = domain.edge_records(EDGE_LIMIT) if edge_values else []
    smallest = [  # an edge record replacing an ordinary one, in the smallest dataset
        CandidatePair(
            _copies(low, lo, width), edge, lo - 1, "an ordinary record replaced by an edge record"
        )
        for edge in edges
    ]
    yield from _interleaved(exchanged(), smallest[:EARLY_EDGES])
    yield from smallest[EARLY_EDGES:]
    moves = [(r, t) for r in (centre, zero) if r is not None for t in (high, low)]
    for start, target in moves:
        for s in counts:
            yield replaced(start, target, s)
    corners = domain.corners(CORNER_LIMIT, rng)
    changes = domain.single_changes(low, CORNER_LIMIT) + domain.single_changes(high, CORNER_LIMIT)
    others = [(c, _opposite(domain, c)) for c in corners]
    others += [(low, c) for c in changes] + [(high, c) for c in changes]
    for start, target in others:
        for s in (lo, smax):
            yield replaced(start, target, s)
    for edge in edges:  # larger datasets; the edge record as the rest of the dataset
        if smax != lo:
            yield CandidatePair(
                _copies(low, smax, width),
                edge,
                smax - 1,
                f"{smax} ordinary records, one replaced by an edge record",
            )
        yield CandidatePair(
            _copies(high, lo, width), edge, lo - 1, "an ordinary record replaced by an edge record"
        )
        if smax >= 2:
            yield CandidatePair(
                np.vstack([_copies(edge, smax - 1, width), low[None, :]]),
                high,
                smax - 1,
                f"{_records(smax - 1, 'edge')} and an ordinary one, the ordinary one replaced",
            )


def _add_remove(
    domain: RecordDomain, sizes: tuple[int, int], rng: np.random.Generator, edge_values: bool
) -> Iterator[CandidatePair]:
    low, high, centre, zero = domain.low(), domain.high(), domain.centre(), domain.zero()
    width = domain.width
    smin, smax = sizes
    counts = sorted({smin, min(smin + 1, smax - 1), smax - 1})

    def mixed(s: int) -> np.ndarray:
        return np.array([low if i % 2 == 0 else high for i in range(s)]).reshape(s, width)

    def added(record: np.ndarray, s: int, fills: tuple[np.ndarray, ...], mix: bool):
        if s == 0:
            yield CandidatePair(_copies(record, 0, width), record, None, "no records, one added")
            return
        yield CandidatePair(
            _copies(record, s, width),
            record,
            None,
            "one record, a copy added" if s == 1 else f"{s} duplicates, one more added",
        )
        for fill in fills:
            yield CandidatePair(
                _copies(fill, s, width),
                record,
                None,
                "one record, another added" if s == 1 else f"{s} equal records, one added",
            )
        if mix:
            yield CandidatePair(mixed(s), record, None, f"{s} mixed records, one added")

    def exchanged() -> Iterator[CandidatePair]:
        """The all-low and all-high records added, to every kind of dataset."""
        for record in (low, high):
            for s in counts:
                yield from added(record, s, (low, high, centre), True)

    edges = domain.edge_records(EDGE_LIMIT) if edge_values else []
    name = "no records, an edge record added" if smin == 0 else "an edge record added"
    # an edge record added to the smallest dataset
    smallest = [CandidatePair(_copies(low, smin, width), edge, None, name) for edge in edges]
    yield from _interleaved(exchanged(), smallest[:EARLY_EDGES])
    yield from smallest[EARLY_EDGES:]
    for record in [zero] if zero is not None else []:
        for s in counts:
            yield from added(record, s, (low, high, centre), True)
    for s in counts:
        yield from added(centre, s, (low, high, centre), True)
    corners = domain.corners(CORNER_LIMIT, rng)
    changes = domain.single_changes(low, CORNER_LIMIT) + domain.single_changes(high, CORNER_LIMIT)
    for record in corners + changes:
        for s in (smin, smax - 1):
            yield from added(record, s, (_opposite(domain, record),), False)
    for edge in edges:  # larger datasets; the edge record as the rest of the dataset
        if smax - 1 != smin:
            yield CandidatePair(
                _copies(low, smax - 1, width),
                edge,
                None,
                f"{_records(smax - 1, 'ordinary')}, an edge record added",
            )
        if smax - 1 >= 1:
            for record in (low, high):
                yield CandidatePair(
                    _copies(edge, smax - 1, width),
                    record,
                    None,
                    f"{_records(smax - 1, 'edge')}, an ordinary one added",
                )


def structured(
    domain: RecordDomain,
    relation: str,
    sizes: tuple[int, int],
    rng: np.random.Generator,
    *,
    edge_values: bool,
) -> Iterator[CandidatePair]:
    """Structured candidates, most promising first (duplicates are removed by the caller).

    Args:
        domain: the record domain.
        relation: ``"replace-one"`` or ``"add-remove"``.
        sizes: ``(min, max)`` dataset sizes (checked by the caller).
        rng: picks the corners tried when the box has too many.
        edge_values: also propose edge records (NaN, infinities, values outside the range).

    Yields:
        Candidate pairs.
    """
    if relation == "replace-one":
        yield from _replace_one(domain, sizes, rng, edge_values)
    else:
        yield from _add_remove(domain, sizes, rng, edge_values)


def _resize(base: np.ndarray, s: int, keep_last: bool) -> np.ndarray:
    """``base`` cut or extended (by repeating its first row) to ``s`` rows."""
    if s <= len(base):
        return base[len(base) - s :] if keep_last else base[:s]
    fill = np.tile(base[:1], (s - len(base), 1))
    return np.vstack([fill, base])


def perturb(
    parent: CandidatePair,
    domain: RecordDomain,
    sizes: tuple[int, int],
    rng: np.random.Generator,
    round_: int,
    *,
    edge_values: bool,
) -> CandidatePair:
    """A neighbour of ``parent``: records moved towards corners and edges (with
    ``edge_values``, sometimes onto an edge value), duplicated, the dataset resized."""
    base, record, index = parent.base.copy(), parent.record.copy(), parent.index
    replace = index is not None
    s = len(base)
    op = rng.choice(["record", "record", "row", "all", "duplicate", "size"])
    if op == "record":
        record = domain.perturb(record, rng, edge_values)
    elif op == "row" and s > 0:
        j = index if (replace and rng.random() < 0.5) else int(rng.integers(s))
        base[j] = domain.perturb(base[j], rng, edge_values)
    elif op == "all" and s > 0:
        row = (
            domain.perturb(base[0], rng, edge_values) if rng.random() < 0.5 else domain.uniform(rng)
        )
        keep = base[index].copy() if replace else None
        base[:] = row
        if replace:
            base[index] = keep
    elif op == "duplicate" and s > 0:
        source = base[index] if replace else record
        count = int(rng.integers(1, s + 1))
        chosen = [i for i in range(s) if i != index][:count]
        base[chosen] = source
    else:  # size
        lo, hi = (max(1, sizes[0]), sizes[1]) if replace else (sizes[0], sizes[1] - 1)
        new = int(rng.integers(lo, hi + 1))
        base = _resize(base, new, keep_last=replace)
        if new == 0:
            base = base.reshape(0, domain.width)
        index = new - 1 if replace else None
    return CandidatePair(base, record, index, f"local search round {round_}")
