"""The auditor's own process pool (``workers > 1``): the parts of a streamed proposal and
the counting tasks run in the workers, with the same results as one process.

Streaming is forced on small audits by shrinking ``HELD_SELECTION_SAMPLES`` (as in
test_streaming.py). No statistical test here: every check is an exact equality.
"""

from __future__ import annotations

import multiprocessing

import _audit_mechanisms as mech
import numpy as np
import pytest

from dpaudit.audit import audit, batches, runner, streaming
from dpaudit.audit.batches import EventCounts
from dpaudit.audit.errors import MechanismError
from dpaudit.audit.estimators import predicted_bounds
from dpaudit.audit.events import (
    Coordinate,
    FloatClassEvent,
    Identity,
    OutcomeSetEvent,
    ThresholdEvent,
    count_hits,
)
from dpaudit.audit.float_bits import class_keys
from dpaudit.audit.runner import Runner
from dpaudit.audit.selection import (
    FAMILIES,
    SEARCH_PARTS,
    part_pieces,
    rank,
    search_events,
    search_part,
    search_parts,
)
from dpaudit.audit.streaming import (
    PARTS,
    others_piece,
    others_pieces,
    others_proposal,
    proposal_parts,
    propose_part,
    propose_sketches,
)

#: Held selection samples and batch size of the streamed audits below.
HELD, BATCH = 2_000, 1_000


@pytest.fixture
def small_pilot(monkeypatch):
    monkeypatch.setattr(streaming, "HELD_SELECTION_SAMPLES", HELD)


def _same_result(**kwargs):
    runs = [audit(workers=w, **kwargs).to_dict() for w in (1, 2)]
    for r in runs:
        r.pop("wall_time")
    assert runs[0] == runs[1]
    return runs[0]


def test_streamed_vector_audit_with_every_family_does_not_depend_on_the_workers(small_pilot):
    """Vector outputs, every family (the bits search is a part of its own): same result."""
    result = _same_result(
        mechanism=mech.LaplacePair(),
        d0=0.0,
        d1=1.0,
        epsilon=1.0,
        samples=20_000,
        seed=5,
        batch_size=BATCH,
    )
    assert result["selection_samples"] > HELD  # streamed
    assert result["epsilon_limit"] is not None  # computed by a worker, the same


def test_streamed_scalar_audit_restates_learned_events_the_same(small_pilot):
    """The thinned pilot a worker returns restates a learned event as the parent would."""
    result = _same_result(
        mechanism=mech.ShiftedLaplace(1.0),
        d0=0.0,
        d1=1.0,
        epsilon=1.0,
        samples=20_000,
        seed=2,
        batch_size=BATCH,
        families=("classifier",),
    )
    assert result["family"] == "classifier" and result["event"].startswith("the output")


def test_held_vector_audit_and_screened_pairs_do_not_depend_on_the_workers():
    """Every selection sample held (no streaming): the search parts run in the workers, the
    frequencies of the statistical limit too; with several pairs, screening as well."""
    result = _same_result(
        mechanism=mech.LaplacePair(), d0=0.0, d1=1.0, epsilon=1.0, samples=4_000, seed=5
    )
    assert result["epsilon_limit"] is not None
    pairs = [(0.0, 1.0), (0.0, 0.5), (0.0, 2.0)]
    result = _same_result(
        mechanism=mech.ShiftedLaplace(1.0), pairs=pairs, epsilon=1.0, samples=4_000, seed=6
    )
    assert result["pairs_searched"] == 3


@pytest.mark.parametrize("kind", ["scalar", "vector"])
def test_search_parts_in_any_order_give_the_search(kind):
    x0, x1, schema = _pilot(kind)
    rng = np.random.default_rng(3)
    whole = search_events(x0, x1, schema, _scorer, rng=rng)
    parts = search_parts(schema, FAMILIES, len(x0))
    assert parts == list(SEARCH_PARTS)
    backwards = [search_part(p, x0, x1, schema, _scorer, rng=rng) for p in parts[::-1]]
    ranked = rank([c for found in backwards[::-1] for c in found], schema)
    assert [(c.event.describe(), c.numerator, c.predicted) for c in ranked] == [
        (c.event.describe(), c.numerator, c.predicted) for c in whole
    ]
    assert rng.bit_generator.state == np.random.default_rng(3).bit_generator.state


def _pilot(kind: str) -> tuple[np.ndarray, np.ndarray, streaming.OutputSchema]:
    rng = np.random.default_rng(0)
    if kind == "scalar":
        return (
            rng.laplace(0, 1, 3_000),
            1 + rng.laplace(0, 1, 3_000),
            streaming.OutputSchema("scalar"),
        )
    x0, x1 = rng.laplace(0, 1, (3_000, 3)), rng.laplace(0, 1, (3_000, 3))
    x1[:, 0] += 1
    return x0, x1, streaming.OutputSchema("vector", 3)


def _scorer(num: np.ndarray, den: np.ndarray, n: int) -> np.ndarray:
    return predicted_bounds(num, den, n, 10_000, 0.025, 0.0)


def _key(sketch) -> tuple:
    """What a sketch proposes, comparable."""
    if isinstance(sketch, streaming.ThresholdSketch):
        return (sketch.family, sketch.feature.describe(), tuple(sketch.thresholds.tolist()))
    if isinstance(sketch, streaming.EventSketch):
        return (sketch.families, sketch.numerators, tuple(e.describe() for e in sketch.events))
    return (type(sketch).__name__, sketch.outcomes)


@pytest.mark.parametrize("kind", ["scalar", "vector"])
def test_parts_in_any_order_give_the_sketches_of_the_whole_proposal(kind):
    """Each part starts from a copy of the rng: run backwards, the parts give what
    propose_sketches gives (which runs them forwards), and the rng is left as it was."""
    x0, x1, schema = _pilot(kind)
    rng = np.random.default_rng(7)
    whole = propose_sketches(x0, x1, schema, _scorer, rng=rng)
    parts = proposal_parts(schema, FAMILIES, len(x0))
    assert parts == list(PARTS)
    backwards = [
        propose_part(part, x0, x1, schema, _scorer, rng=rng).sketches for part in parts[::-1]
    ]
    pieced = [s for sketches in backwards[::-1] for s in sketches]
    assert [_key(s) for s in pieced] == [_key(s) for s in whole]
    assert rng.bit_generator.state == np.random.default_rng(7).bit_generator.state


def _described(found) -> list[tuple]:
    return [(c.event.describe(), c.numerator, c.predicted, c.family) for c in found]


@pytest.mark.parametrize("kind", ["scalar", "vector"])
def test_the_pieces_of_every_search_part_give_the_part(kind):
    """The bits search of vector outputs splits per coordinate (the workers share it): its
    pieces in order give the part's candidates; every other part is one piece."""
    x0, x1, schema = _pilot(kind)
    rng = np.random.default_rng(3)
    for part in search_parts(schema, FAMILIES, len(x0)):
        pieces = part_pieces(part, schema)
        assert pieces == (3 if (part, kind) == ("bits", "vector") else 1)
        whole = search_part(part, x0, x1, schema, _scorer, rng=rng)
        pieced = [
            c
            for j in range(pieces)
            for c in search_part(part, x0, x1, schema, _scorer, rng=rng, piece=j)
        ]
        assert _described(pieced) == _described(whole)
    with pytest.raises(ValueError, match=r"piece must be None or an integer in \[0, 1\)"):
        search_part("threshold", x0, x1, schema, _scorer, rng=rng, piece=1)


def test_the_others_pieces_give_the_others_proposal():
    """The ``others`` part of a streamed proposal (the bits search of a vector pilot), run
    as pieces and merged in order, proposes the events it proposes whole."""
    x0, x1, schema = _pilot("vector")
    rng = np.random.default_rng(9)
    pieces = others_pieces(schema, FAMILIES, len(x0))
    assert pieces == [("bits", j) for j in range(3)]
    whole = propose_part("others", x0, x1, schema, _scorer, rng=rng)
    merged = others_proposal(
        [c for p in pieces for c in others_piece(p, x0, x1, schema, _scorer, rng=rng)], schema
    )
    assert [_key(s) for s in merged.sketches] == [_key(s) for s in whole.sketches]
    assert merged.pilot_tallies == whole.pilot_tallies == (None,)
    # no piece at all (categorical outputs): the "none" placeholders, as before
    cat = streaming.OutputSchema("categorical")
    assert others_pieces(cat, FAMILIES, 10) == []
    assert [e.describe() for e in others_proposal([], cat).sketches[0].events] == [
        e.describe()
        for e in propose_part("others", x0[:0], x1[:0], cat, _scorer, rng=rng).sketches[0].events
    ]


def test_a_worker_draws_the_pilot_the_parent_would_and_drops_it_when_counting():
    root = np.random.SeedSequence(11)
    with Runner(mech.ShiftedLaplace(1.0), root, batch_size=100, workers=2) as run:
        pilot = run.pilot([(0.0, 450, (0, 0, 0)), (1.0, 450, (0, 0, 1))])
        held = pilot.outputs()
        assert pilot.outputs() is held  # drawn once per process
        np.testing.assert_array_equal(held[0], run.sample(0.0, 450, (0, 0, 0)))
        np.testing.assert_array_equal(held[1], run.sample(1.0, 450, (0, 0, 1)))
        batches.tally_task(pilot.mechanism, 0.0, 10, root, pilot.schema, [])
        assert batches._HELD == {}


def test_grouped_counting_tasks_count_what_single_batches_count():
    """The own pool groups batches (runner.guided_groups): the same sums as one process."""
    events = EventCounts(tuple(ThresholdEvent(Identity(), t, True) for t in (-1.0, 0.0, 2.0)))
    tasks = [(0.0, 9_350, (1, 0, 0)), (1.0, 9_350, (1, 0, 1))]  # 93 batches each, one short
    totals = []
    for workers in (1, 2, 3):
        with Runner(mech.ShiftedLaplace(1.0), np.random.SeedSequence(4), 100, workers) as run:
            run.sample(0.0, 100, (9,))  # fixes the schema
            totals.append([t[0].tolist() for t in run.tally(tasks, [events], skip=1)])
    assert totals[0] == totals[1] == totals[2]


@pytest.mark.parametrize("counts", [[23, 23], [77, 77], [1], [5, 0, 3], [200]])
@pytest.mark.parametrize("workers", [0, 1, 2, 8])
def test_guided_groups_cover_every_batch_once_and_shrink(counts, workers):
    groups = runner.guided_groups(counts, workers)
    for task, count in enumerate(counts):  # consecutive, in order, every batch once
        mine = [(a, b) for t, a, b in groups if t == task]
        assert [a for a, _ in mine] == ([0] + [b for _, b in mine[:-1]] if mine else [])
        assert (mine[-1][1] if mine else 0) == count
    sizes = [b - a for _, a, b in groups]
    assert all(size >= 1 for size in sizes)
    if workers == 0:
        assert set(sizes) == {1}
    elif sum(counts) >= 2 * runner.GUIDED_SHARE * workers:
        assert sizes[-1] == 1 and len(groups) < sum(counts)  # fewer round trips, a fine end


def test_guided_groups_of_a_two_worker_phase():
    # 23 + 23 selection batches of a 10^7 audit: 15 tasks, not 46
    sizes = [b - a for _, a, b in runner.guided_groups([23, 23], 2)]
    assert sizes == [11, 8, 4, 5, 4, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1]


def test_forked_workers_inherit_the_pilot_the_parent_drew(monkeypatch):
    """With the fork start method, the parent draws the pilot before its pool starts and the
    workers use that copy (they draw nothing); the proposals are those of one process."""
    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the pilot is inherited only by forked workers")
    calls = []
    real = batches.draw

    def counted(*args, **kwargs):
        calls.append(multiprocessing.current_process().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(batches, "draw", counted)
    monkeypatch.setattr(runner, "draw", counted)
    keys = ((1, 0, 0), (1, 0, 1))
    with Runner(mech.ShiftedLaplace(1.0), np.random.SeedSequence(8), 100, 2) as run:
        pilot = run.pilot([(0.0, 500, keys[0]), (1.0, 500, keys[1])])
        assert batches._HELD == {}  # dropped by the parent once the workers have it
        x0, x1 = run.result(run.submit(_pilot_outputs, pilot))
        drawn_here = len(calls)
    assert drawn_here == 10  # 5 batches per dataset, the first one once (it fixed the schema)
    with Runner(mech.ShiftedLaplace(1.0), np.random.SeedSequence(8), 100, 1) as run:
        assert np.array_equal(x0, run.sample(0.0, 500, keys[0]))
        assert np.array_equal(x1, run.sample(1.0, 500, keys[1]))


def _pilot_outputs(pilot):
    """Worker task: the pilot's outputs, and that the worker drew none of them."""
    held = dict(batches._HELD)
    assert pilot.token in held, "the worker drew the pilot again"
    return pilot.outputs()


@pytest.mark.slow
def test_a_script_ending_right_after_a_pooled_audit_prints_nothing():
    """An audit with its own pool waits for its workers to exit: a script that ends right
    after it writes nothing to stderr (not waiting raced with the interpreter's exit on
    Python 3.11: 'OSError: Bad file descriptor' from concurrent.futures)."""
    import subprocess
    import sys

    code = (
        "from dpaudit.audit import audit\n"
        "from mechanisms.catalogue import LaplaceCount\n"
        "m = LaplaceCount(1.0)\n"
        "audit(m, pairs=m.pairs, epsilon=1.0, samples=200_000, seed=1, workers=2)\n"
    )
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 0 and done.stderr == "", done.stderr[-500:]


def test_a_pool_that_fails_during_the_proposal_is_shut_down(small_pilot):
    """The mechanism raises in the workers (after the parent drew the first batch and the
    pool started): a MechanismError, and no worker process is left behind."""
    with pytest.raises(MechanismError, match="only runs in the process that made it"):
        audit(
            mech.FailsInWorkers(),
            0.0,
            1.0,
            epsilon=1.0,
            samples=20_000,
            seed=1,
            batch_size=BATCH,
            workers=2,
        )
    assert multiprocessing.active_children() == []
    # control: the same audit in one process runs
    assert audit(mech.FailsInWorkers(), 0.0, 1.0, epsilon=1.0, samples=4_000, seed=1).samples_drawn


def test_sketches_sent_to_the_pool_are_rebuilt_once_per_process():
    import pickle

    value = (np.arange(5.0), "sketch")
    once = batches.SentOnce(value)
    first, second = (pickle.loads(pickle.dumps(once)) for _ in range(2))
    assert first is second and first[1] == "sketch"
    np.testing.assert_array_equal(first[0], value[0])
    other = pickle.loads(pickle.dumps(batches.SentOnce(("next",))))
    assert other == ("next",)
    assert len(batches._ONCE) == 1  # the last value only


@pytest.mark.parametrize("kind", ["scalar", "vector"])
def test_grouped_hits_are_each_events_own_count(kind):
    """count_hits computes the class codes once per coordinate and partition: the counts
    are each event's own, in order, for floating-point events of several coordinates,
    partitions and class sets mixed with other events."""
    x0, _, schema = _pilot(kind)
    coordinates = [None] if kind == "scalar" else [0, 2, 1]
    events: list = [ThresholdEvent(Identity() if kind == "scalar" else Coordinate(1), 0.5, True)]
    for c in coordinates:
        column = x0 if c is None else x0[:, c]
        for key in class_keys():
            seen = np.unique(key.codes(column))
            events += [
                FloatClassEvent(key, tuple(int(v) for v in seen[::2]), c),
                FloatClassEvent(key, tuple(int(v) for v in seen[1:3]), c),
            ]
    events.append(OutcomeSetEvent((), schema))
    own = [int(np.count_nonzero(e.contains(x0))) for e in events]
    assert count_hits(events, x0).tolist() == own
    assert len(set(own)) > 5  # the events differ, so a mix-up would show
