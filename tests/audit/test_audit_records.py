"""``audit_records``: the record-level neighbour search finds the pair on its own.

Statistical design: every audit certifies at confidence 0.95 (alpha = 0.05: a correct function
is flagged with probability at most 0.05 per audit, by the Clopper-Pearson certification on
fresh samples), with 100,000 samples per dataset in the final audit and a search drawing at
most twice that (successive halving: a few hundred samples per dataset of each candidate
first, at most 25,000 for the last few); seeds are fixed, so each test is deterministic.
The correct functions are checked to be *not* flagged and, to show the search found their
worst pair, certified close to their true epsilon; the broken ones (the same code with one
defect) are flagged. The functions read NaN as 0 before their clamp, so they are correct on
edge values too and the search (edge values on, the default) must still find their ordinary
worst pair; a test whose bug lies in ordinary values and would also show on edge values (a
missing clamp) turns them off.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pytest
from _records_mechanisms import (
    ClippedSum,
    ForgetsUpperClip,
    NoisyHistogram,
    TwoColumnSum,
    fails_on_empty,
    writes_its_input,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit import AuditResult, RecordsAuditResult, audit_records
from dpaudit.audit.domain import check_domain
from dpaudit.audit.errors import MechanismError
from dpaudit.audit.record_pairs import perturb, structured
from dpaudit.audit.records import RELATIONS
from dpaudit.audit.records_text import parse_records

ALPHA = 0.05
SAMPLES = 100_000
DOMAIN = [(-1.0, 10.0), (0.0, 1.0)]  # column 0 is summed, column 1 is ignored
EPSILON = 1.0
#: Sensitivity of the sum of column 0 clipped to [-1, 10]: a record replaced moves it by up to
#: 11, a record added or removed by up to 10.
SENSITIVITY = {"replace-one": 11.0, "add-remove": 10.0}


def run(fn: Any, domain: Any = DOMAIN, **kwargs: Any) -> RecordsAuditResult:
    kwargs.setdefault("epsilon", EPSILON)
    kwargs.setdefault("samples", SAMPLES)
    kwargs.setdefault("confidence", 1 - ALPHA)
    kwargs.setdefault("seed", 0)
    return audit_records(fn, domain, **kwargs)


def replaced(d0: np.ndarray, d1: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The row of d0 that d1 replaces, and the row replacing it (same-size datasets)."""
    rest0, rest1 = list(map(tuple, d0.tolist())), list(map(tuple, d1.tolist()))  # no NaN here
    for row in list(rest0):
        if row in rest1:
            rest0.remove(row)
            rest1.remove(row)
    assert len(rest0) == len(rest1) == 1
    return rest0[0], rest1[0]


def neighbours(d0: np.ndarray, d1: np.ndarray, relation: str) -> bool:
    """Whether d0 and d1 are neighbours under ``relation`` (as multisets of rows; a row is
    its bytes, so NaN equals NaN and -0.0 differs from 0.0)."""
    rows0 = sorted(row.tobytes() for row in np.asarray(d0, dtype=float))
    rows1 = sorted(row.tobytes() for row in np.asarray(d1, dtype=float))
    if relation == "add-remove":
        small, large = sorted((rows0, rows1), key=len)
        if len(large) != len(small) + 1:
            return False
        rest = list(large)
        for r in small:
            if r not in rest:
                return False
            rest.remove(r)
        return True
    if len(rows0) != len(rows1):
        return False
    rest = list(rows1)
    unmatched = 0
    for r in rows0:
        if r in rest:
            rest.remove(r)
        else:
            unmatched += 1
    return unmatched <= 1


@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
def test_correct_clipped_laplace_sum_is_not_flagged_and_its_worst_pair_is_found(
    relation: str,
) -> None:
    fn = ClippedSum(-1.0, 10.0, SENSITIVITY[relation] / EPSILON)
    result = run(fn, relation=relation)
    assert isinstance(result, AuditResult)
    assert not result.violation
    assert result.epsilon_lower <= EPSILON
    # Only a pair moving the sum by the full sensitivity certifies this close to epsilon
    # (a record moved by half the range would give at most 0.5).
    assert result.epsilon_lower > 0.8
    d0, d1 = result.pair
    assert neighbours(d0, d1, relation)
    assert abs(fn.total(d0) - fn.total(d1)) == SENSITIVITY[relation]


@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
def test_sum_with_ten_times_too_little_noise_is_flagged(relation: str) -> None:
    result = run(ClippedSum(-1.0, 10.0, SENSITIVITY[relation] / EPSILON / 10), relation=relation)
    assert result.violation
    assert result.epsilon_lower > 5.0  # true epsilon 10


def test_bug_only_at_a_corner_record_is_found() -> None:
    # Correct for every record change that moves one column; a record moved from the corner
    # (0, 0) to the corner (1, 1) doubles the privacy loss: true epsilon 2.
    result = run(TwoColumnSum(1.0 / EPSILON), [(0.0, 1.0), (0.0, 1.0)])
    assert result.violation and result.epsilon_lower > 1.5
    # the corners themselves, or (with edge values) records the clamp reads as them
    seen_as = [tuple(np.clip(r, 0.0, 1.0)) for r in replaced(*result.pair)]
    assert sorted(seen_as) == [(0.0, 0.0), (1.0, 1.0)]


@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
def test_missing_upper_clip_is_found(relation: str) -> None:
    # claims values clipped to [0, 1] (sensitivity 1); records up to 5 leak 5x more (edge
    # values off: an infinite record would leak without bound and hide this finding)
    fn = ForgetsUpperClip(0.0, 1.0, 1.0 / EPSILON)
    result = run(fn, [(-1.0, 5.0)], relation=relation, edge_values=False)
    assert result.violation and result.epsilon_lower > 3.0
    assert 5.0 in np.concatenate(result.pair).ravel()


@pytest.mark.slow  # 5 s: two record searches
def test_relations_differ_on_a_histogram_with_vector_outputs() -> None:
    # Laplace(1/eps) on each bin: eps-DP under add-remove, 2 eps under replace-one.
    fn = NoisyHistogram(4, 1.0 / EPSILON)
    domain = [[0, 1, 2, 3]]
    add_remove = run(fn, domain, relation="add-remove")
    replace_one = run(fn, domain, relation="replace-one")
    assert not add_remove.violation and add_remove.epsilon_lower > 0.7
    assert replace_one.violation and replace_one.epsilon_lower > 1.5
    assert neighbours(*replace_one.pair, "replace-one")
    assert neighbours(*add_remove.pair, "add-remove")


def test_same_seed_same_pair_and_bound_whatever_the_workers() -> None:
    fn = ClippedSum(-1.0, 10.0, 1.1)
    kwargs: dict[str, Any] = dict(samples=20_000, seed=7, batch_size=2_500)
    one = run(fn, **kwargs)
    again = run(fn, **kwargs)
    two = run(fn, workers=2, **kwargs)
    for other in (again, two):
        assert all(np.array_equal(a, b) for a, b in zip(one.pair, other.pair, strict=True))
        assert (one.epsilon_lower, one.event, one.hits_d0, one.hits_d1) == (
            other.epsilon_lower,
            other.event,
            other.hits_d0,
            other.hits_d1,
        )
    assert one == again  # same fields (the wall time aside: equality compares to_dict) ...
    other_seed = run(fn, samples=20_000, seed=8, batch_size=2_500)
    # ... and the seed matters
    assert (other_seed.hits_d0, other_seed.hits_d1, other_seed.event) != (
        one.hits_d0,
        one.hits_d1,
        one.event,
    )


def test_result_records_the_search_and_is_json() -> None:
    result = run(ClippedSum(-1.0, 10.0, 11.0), samples=10_000, sizes=(0, 3), relation="add-remove")
    data = json.loads(result.to_json())
    assert data["relation"] == "add-remove"
    assert data["pairs_searched"] == data["candidates_searched"] == result.candidates_searched > 10
    assert [np.asarray(d).shape[1] for d in data["pair"]] == [2, 2]
    assert all(d.ndim == 2 and d.shape[1] == 2 for d in result.pair)
    assert all(0 <= len(d) <= 3 for d in result.pair)
    domain = check_domain(DOMAIN)
    assert all(domain.contains(row) for d in result.pair for row in d)
    assert "candidate pairs" in result.correction and "pair" in str(result)
    assert result.samples_drawn > 2 * 10_000


def test_budget_cuts_the_search_short() -> None:
    result = run(ClippedSum(-1.0, 10.0, 11.0), samples=10_000, budget_seconds=1e-9)
    assert result.candidates_searched == 1


def test_function_failure_names_the_datasets_with_on_error_raise() -> None:
    with pytest.raises(MechanismError, match=r"ZeroDivisionError.*dataset 0 record"):
        run(fails_on_empty, relation="add-remove", sizes=(0, 2), samples=1_000, on_error="raise")
    with pytest.raises(MechanismError, match="read-only"):
        run(writes_its_input, samples=1_000, on_error="raise")
    # by default every candidate is refused: one error, listing a few of the refusals
    with pytest.raises(MechanismError, match=r"fn raised on every candidate pair .*read-only"):
        run(writes_its_input, samples=1_000)


@pytest.mark.parametrize(
    ("domain", "match"),
    [
        (
            [(2.0, 1.0)],
            r"domain\[0\] must be a \(low, high\) tuple with low <= high, got \(2.0, 1.0\)",
        ),
        ([(0, 1), (0.0, float("nan"))], r"domain\[1\] must be .*finite numbers.*nan"),
        ([(0.0, float("inf"))], r"domain\[0\] .*finite.*inf"),
        ([[]], r"domain\[0\] must be a non-empty list"),
        ([["a", "b"]], r"domain\[0\] must list finite numbers.*got the value 'a'"),
        ([(0, 1, 2)], r"domain\[0\] must be a \(low, high\) tuple of two.*3 items"),
        ([(True, 2)], r"domain\[0\] .*finite numbers"),
        ([{"low": 0}], r"domain\[0\] must be a \(low, high\) tuple .* or a list .*got dict"),
        ([], r"domain must have between 1 and"),
        ((0.0, 1.0), r"domain must be a list of columns.*\[\(0.0, 1.0\)\]"),
        ("(0,1)", r"domain must be a list.*got str"),
    ],
)
def test_bad_domains_are_refused_with_what_and_where(domain: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        run(ClippedSum(0, 1, 1.0), domain)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"relation": "swap"},
            r"relation must be one of \('replace-one', 'add-remove'\), got 'swap'",
        ),
        ({"sizes": (3, 2)}, r"sizes must be a \(min, max\) pair .*0 <= min <= max.*got \(3, 2\)"),
        ({"sizes": (0, 0)}, r"sizes must be .*max >= 1 for replace-one, got \(0, 0\)"),
        ({"sizes": (2, 2), "relation": "add-remove"}, r"max >= min \+ 1 for add-remove"),
        ({"sizes": 5}, r"sizes must be a \(min, max\) pair.*got 5"),
        ({"samples": 5}, r"samples must be an integer in \[10, .*got 5"),
        ({"confidence": 1.0}, r"confidence must be a float in \(0, 1\), got 1.0"),
        ({"epsilon": -1.0}, r"epsilon must be a number >= 0, got -1.0"),
        ({"delta": 1.0}, r"delta must be a number in \[0, 1\), got 1.0"),
        ({"budget_seconds": 0}, r"budget_seconds must be None or a number of seconds > 0, got 0"),
        ({"workers": 0}, r"workers must be an integer in \[1, "),
    ],
)
def test_bad_parameters_are_refused_naming_them(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        run(ClippedSum(0, 1, 1.0), **kwargs)


def test_records_text_parses_numeric_and_categorical_columns() -> None:
    assert parse_records("(-1,10),(0,1)") == [(-1.0, 10.0), (0.0, 1.0)]
    assert parse_records(" (0, 1e2) , {0,1,2}, [ -.5, 3. ]") == [
        (0.0, 100.0),
        [0.0, 1.0, 2.0],
        [-0.5, 3.0],
    ]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("(0,1", r"expected ',' or '\)', found end"),
        ("(0,1,2)", r"'\(low,high\)' with two numbers, got 3"),
        ("(0,1)(2,3)", r"expected ',' between columns, found '\(' at character 5"),
        ("{}", r"expected a number, found '}'"),
        ("(0,__import__('os'))", r"unexpected '__import__' at character 3"),
        ("(0,1],", r"expected ',' or '\)', found '\]'"),
        ("", r"expected '\(' , '\{' or '\[', found end"),
    ],
)
def test_bad_records_text_is_refused_with_where(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=r"--records.*" + match):
        parse_records(text)


_numeric = st.tuples(
    st.sampled_from([-1e6, -3.5, -1.0, 0.0, 0.25, 2.0]),
    st.sampled_from([0.0, 0.5, 1.0, 7.0, 1e6]),
).map(lambda t: (min(t), max(t)))
_categorical = st.lists(st.integers(-3, 5), min_size=1, max_size=5)
_domains = st.lists(st.one_of(_numeric, _categorical), min_size=1, max_size=4)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    domain=_domains,
    relation=st.sampled_from(RELATIONS),
    smin=st.integers(0, 3),
    extra=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    edge_values=st.booleans(),
)
def test_every_candidate_pair_is_neighbouring_in_the_domain_and_sizes(
    domain: list[Any], relation: str, smin: int, extra: int, seed: int, edge_values: bool
) -> None:
    # A pair that is not neighbouring (or leaves the domain) could flag a correct function:
    # every pair the search may certify, structured or perturbed, is checked here; with edge
    # values, a record may also hold its columns' edge values (and nothing else).
    checked = check_domain(domain)
    sizes = (smin, smin + extra)
    rng = np.random.default_rng(seed)
    generated = structured(checked, relation, sizes, rng, edge_values=edge_values)
    candidates = list(itertools.islice(generated, 400))
    assert candidates
    for parent in list(candidates[:10]) + list(candidates[-10:]):
        child = parent
        for round_ in range(8):
            child = perturb(child, checked, sizes, rng, round_, edge_values=edge_values)
            candidates.append(child)
    lowest = max(1, sizes[0]) if relation == "replace-one" else sizes[0]
    edges = 0
    for candidate in candidates:
        d0, d1 = candidate.datasets(checked.width)
        assert neighbours(d0, d1, relation), candidate.name
        assert all(lowest <= len(d) <= sizes[1] for d in (d0, d1)), candidate.name
        assert all(checked.admits(row, edge_values) for d in (d0, d1) for row in d), candidate.name
        assert not d0.flags.writeable and not d1.flags.writeable
        edges += any(not checked.admits(row, False) for d in (d0, d1) for row in d)
    assert (edges > 0) is edge_values  # edge values are proposed exactly when asked for


#: False-alarm experiment: audits of a correct function, each at confidence 1 - ALPHA.
FALSE_ALARM_RUNS = 40
#: P[Binomial(40, 0.05) > 6] < 0.015: a search that inflated the false-alarm rate above
#: alpha (e.g. by certifying on its own search samples) would exceed it.
FALSE_ALARM_MAX = 6


@pytest.mark.slow
@pytest.mark.parametrize("relation", RELATIONS)
def test_false_alarm_rate_on_a_correct_function_is_at_most_alpha(relation: str) -> None:
    fn = ClippedSum(-1.0, 10.0, SENSITIVITY[relation] / EPSILON)
    alarms = sum(
        run(fn, relation=relation, samples=10_000, seed=1000 + s).violation
        for s in range(FALSE_ALARM_RUNS)
    )
    assert alarms <= FALSE_ALARM_MAX


@pytest.mark.parametrize(("arithmetic", "bits"), [(None, True), ("real", False)])
def test_pair_search_scores_scalar_pairs_with_the_bits_family_unless_real(
    arithmetic: str | None, bits: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidate pairs of a scalar float function are scored with the bits family too
    (a pair whose rounding leaks most is then preferred); not for a real-arithmetic claim."""
    import dpaudit.audit.racing as records

    seen: list[tuple[str, ...]] = []
    real = records.search_events

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(tuple(kwargs["families"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(records, "search_events", spy)

    def noisy_sum(data: np.ndarray, rng: np.random.Generator) -> float:
        return float(np.clip(data[:, 0], 0, 1).sum() + rng.laplace(0.0, 1.0))

    audit_records(
        noisy_sum, [(0.0, 1.0)], epsilon=1.0, samples=2_000, seed=0, arithmetic=arithmetic
    )
    assert seen and all(("bits" in f) is bits for f in seen)
    assert all("classifier" not in f for f in seen)


def test_samples_is_required_and_documented_as_such() -> None:
    """``samples`` has no default (it sets the run time): calling without it names it, and
    the docstring and the docs say it is required."""
    from pathlib import Path

    with pytest.raises(TypeError, match="samples"):
        audit_records(lambda data, rng: 0.0, [(0, 1)], epsilon=1.0)  # type: ignore[call-arg]
    assert "required (no default" in (audit_records.__doc__ or "")
    docs = (Path(__file__).resolve().parents[2] / "docs" / "auditing.md").read_text("utf-8")
    assert "**Samples** (required, no default" in docs
