"""The result of :func:`dpaudit.audit.audit_records`: an audit result that also holds the two
datasets found, the edge values they hold, the candidates refused and what the search cost."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.domain import RecordDomain
from dpaudit.audit.racing import Refusal
from dpaudit.audit.record_pairs import json_rows
from dpaudit.audit.result import AuditResult

__all__ = ["EdgeValue", "RecordsAuditResult", "edge_values_of_pair"]


@dataclass(frozen=True)
class EdgeValue:
    """Records of a dataset of the pair holding one edge value in one column.

    Attributes:
        dataset: ``"d0"`` or ``"d1"``.
        column: the column (0-based).
        value: the value in words (``"NaN"``, ``"+inf"``, ``"10.000000000000002, just above
            the declared range [-1.0, 10.0]"``, ...).
        records: how many records of that dataset hold it there.
    """

    dataset: str
    column: int
    value: str
    records: int

    def __str__(self) -> str:
        what = "a record" if self.records == 1 else f"{self.records} records"
        return f"{self.dataset} holds {what} with value {self.value} in column {self.column}"


def edge_values_of_pair(
    domain: RecordDomain, d0: np.ndarray, d1: np.ndarray
) -> tuple[EdgeValue, ...]:
    """The edge values (values outside the declared domain, or special doubles) the pair
    holds, by dataset and column."""
    found = []
    for name, data in (("d0", d0), ("d1", d1)):
        counts: Counter[tuple[int, str]] = Counter()
        for row in data:
            counts.update(domain.edge_values_in(row))
        found += [EdgeValue(name, j, words, k) for (j, words), k in sorted(counts.items())]
    return tuple(found)


@dataclass(frozen=True, eq=False)
class RecordsAuditResult(AuditResult):
    """The result of :func:`~dpaudit.audit.audit_records`: an :class:`AuditResult` whose
    ``pair`` holds the two datasets found.

    ``epsilon_claimed`` and ``delta`` are the pair's claim (with a claim that depends on the
    dataset, the larger of its two datasets' claims: ``claim_description`` says how it was
    read).

    Attributes:
        pair: ``(d0, d1)``, the neighbouring datasets audited, as 2-D float arrays (one row
            per record).
        pair_description: the pair in words.
        relation: the neighbouring relation searched.
        candidates_searched: candidate pairs tried (refused ones included; also in
            ``pairs_searched``).
        search_samples: samples the search drew, both datasets of every candidate at every
            stage (a dataset on which the function raised counts in full; the probe's few
            runs aside, as for :func:`~dpaudit.audit.audit`'s ``samples_drawn``).
        search_stages: ``(candidates, samples per dataset)`` of each stage of the search.
        edge_values: whether the search tried edge values.
        pair_edge_values: the edge values the pair holds (empty for a pair of ordinary
            records): a finding on such a pair is a violation for inputs outside the
            declared domain, or special doubles (NaN, infinities, -0.0, ...).
        refused: the first :data:`MAX_REFUSALS_LISTED` candidates refused because the
            function raised on them (datasets, exception, message).
        refused_count: how many candidates were refused in all.
        claim_description: how a claim that depends on the dataset was read on the pair
            ("" for a constant claim).
    """

    # the datasets themselves where AuditResult has the pair in words (see _pair_text)
    pair: tuple[np.ndarray, np.ndarray]  # type: ignore[assignment]
    pair_description: str = ""
    relation: str = "replace-one"
    candidates_searched: int = 0
    search_samples: int = 0
    search_stages: tuple[tuple[int, int], ...] = ()
    edge_values: bool = True
    pair_edge_values: tuple[EdgeValue, ...] = ()
    refused: tuple[Refusal, ...] = ()
    refused_count: int = 0
    claim_description: str = ""

    def _pair_text(self) -> str:
        return self.pair_description

    def __str__(self) -> str:
        lines = [super().__str__()]
        if self.pair_edge_values:
            lines.append(
                "  edge values         : "
                + "; ".join(map(str, self.pair_edge_values))
                + " (outside the declared domain or special doubles; edge_values=False "
                "leaves them out for code whose inputs are validated upstream)"
            )
        if self.claim_description:
            lines.append(f"  claim read on pair  : {self.claim_description}")
        stages = ", then ".join(f"{k} on {n:,}" for k, n in self.search_stages)
        lines.append(
            f"  search              : {self.candidates_searched} candidate pairs, "
            f"{self.search_samples:,} samples ({stages} samples per dataset)"
        )
        if self.refused_count:
            shown = "; ".join(map(str, self.refused[:3]))
            more = f"; ... ({self.refused_count - 3} more)" if self.refused_count > 3 else ""
            lines.append(
                f"  refused             : {self.refused_count} candidate pairs on which the "
                f"function raised: {shown}{more}"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """All fields plus the verdict, JSON-ready (the datasets as lists of rows, NaN and
        infinities in them as strings)."""
        data = super().to_dict()
        data["pair"] = [json_rows(d) for d in self.pair]
        data["refused"] = [r.to_dict() for r in self.refused]
        data["search_stages"] = [list(s) for s in self.search_stages]
        return data

    def __eq__(self, other: object) -> bool:
        """Equal fields, datasets included (the wall time aside)."""
        if not isinstance(other, RecordsAuditResult):
            return NotImplemented
        mine, theirs = self.to_dict(), other.to_dict()
        mine.pop("wall_time"), theirs.pop("wall_time")
        return mine == theirs

    # unhashable, as __eq__ compares arrays (mypy does not accept None for a method)
    __hash__ = None  # type: ignore[assignment]
