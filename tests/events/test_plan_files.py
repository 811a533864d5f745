"""Plan files (dpaudit.plans): reading, writing, the schema, and refusing hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.events import (
    Composed,
    Gaussian,
    Laplace,
    PoissonSampled,
    RandomizedResponse,
    SelfComposed,
)
from dpaudit.plans import (
    LIMITS,
    Plan,
    PlanError,
    event_to_node,
    load_plan,
    plan_from_data,
    plan_schema,
    plan_to_data,
)

ROOT = Path(__file__).resolve().parents[2]


def _plan(event: dict, **top) -> dict:
    return {"dpaudit_plan": 1, **top, "event": event}


def test_committed_schema_is_the_generated_one():
    committed = json.loads((ROOT / "docs" / "plan.schema.json").read_text())
    assert committed == plan_schema()


def test_numbers_are_read_exactly():
    p = plan_from_data(
        _plan(
            {"type": "PoissonSampled", "rate": "1/3", "event": {"type": "Gaussian", "sigma": 0.1}},
            delta="1e-6",
            epsilon=2,
        )
    )
    assert p.event == PoissonSampled(Gaussian(sympy.Rational(1, 10)), sympy.Rational(1, 3))
    assert p.delta == sympy.Rational(1, 10**6) and p.epsilon == 2


def test_json_file_reads_decimals_exactly(tmp_path):
    f = tmp_path / "p.json"
    f.write_text('{"dpaudit_plan": 1, "event": {"type": "Laplace", "scale": 0.1}}')
    assert load_plan(f).event.scale == sympy.Rational(1, 10)


def test_yaml_file(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(
        "dpaudit_plan: 1\ndelta: 1e-6\nevent:\n  type: SelfComposed\n  count: 3\n"
        "  event: {type: Laplace, scale: 0.1}\n"
    )
    p = load_plan(f)
    assert p.event == SelfComposed(Laplace(sympy.Rational(1, 10)), 3)
    assert p.delta == sympy.Rational(1, 10**6)


EVENTS = st.recursive(
    st.one_of(
        st.builds(Laplace, st.fractions(min_value=0.01, max_value=100)),
        st.builds(Gaussian, st.fractions(min_value=0.01, max_value=100)),
        st.builds(RandomizedResponse, st.fractions(min_value=0.01, max_value=5)),
    ),
    lambda inner: st.one_of(
        st.builds(SelfComposed, inner, st.integers(1, 1000)),
        st.builds(Composed, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=6,
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(event=EVENTS)
def test_write_then_read_is_the_identity_and_matches_the_schema(event):
    data = plan_to_data(Plan(event, delta=sympy.Rational(1, 10**6)))
    text = json.dumps(data)
    jsonschema.validate(json.loads(text), plan_schema())
    back = plan_from_data(json.loads(text))
    assert back.event == event and back.delta == sympy.Rational(1, 10**6)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (_plan({"type": "Laplace", "scale": -1}), r"event.scale: expected a number > 0, got -1"),
        (
            _plan({"type": "Composed", "events": [{"type": "Laplace", "scale": 1}, {"type": "X"}]}),
            r"event.events\[1\].type: expected an event type \(one of .*Laplace.*\), got 'X'",
        ),
        (
            _plan({"type": "Lapalce", "scale": 1}),
            r"event.type: expected an event type \(closest: Laplace, .*\), got 'Lapalce'",
        ),
        (
            _plan(
                {
                    "type": "SelfComposed",
                    "count": "1e399",
                    "event": {"type": "PureDP", "epsilon": 1},
                },
            ),
            r"event.count: expected a number of magnitude 1e-300 to 1e300, got '1e399'",
        ),
        (
            _plan({"type": "SelfComposed", "count": 2.5, "event": {"type": "Laplace", "scale": 1}}),
            r"event.count: expected an integer >= 1, got",
        ),
        (
            _plan({"type": "PoissonSampled", "rate": 2, "event": {"type": "Laplace", "scale": 1}}),
            r"event.rate: expected a number > 0 and <= 1, got 2",
        ),
        (_plan({"type": "Laplace", "scale": 1, "noise": 3}), r"event.noise: expected a parameter"),
        (_plan({"type": "Laplace"}), r"event.scale: expected a value \(required by Laplace\)"),
        (_plan({"type": "Laplace", "scale": True}), r"event.scale: expected a number"),
        (
            _plan({"type": "Laplace", "scale": "__import__('os').system('x')"}),
            r"event.scale: expected a number",
        ),
        (_plan({"type": "Laplace", "scale": "1e999999"}), r"event.scale: expected a number of"),
        (_plan({"type": "Laplace", "scale": 1}, delta=1), r"delta: expected a number in \[0, 1\)"),
        (_plan({"type": "Laplace", "scale": 1}, epsilon=-1), r"epsilon: expected a number >= 0"),
        ({"dpaudit_plan": 2, "event": {}}, r"dpaudit_plan: expected the plan format version 1"),
        ({"dpaudit_plan": 1, "evnt": {}}, r"evnt: expected one of the keys"),
        (_plan({"type": "Laplace", "scale": 1, "relation": "x"}), r"event.relation: expected one"),
        ([1, 2], r"\(top level\): expected an object"),
    ],
)
def test_errors_name_path_range_and_value(data, match):
    with pytest.raises(PlanError, match=match):
        plan_from_data(data)


def test_refuses_deep_nesting():
    node: dict = {"type": "Laplace", "scale": 1}
    for _ in range(LIMITS["max_depth"] + 1):
        node = {"type": "PostProcessed", "event": node}
    with pytest.raises(PlanError, match="nested at most 64 deep"):
        plan_from_data(_plan(node))


def test_refuses_too_many_nodes_even_when_shared():
    # a "billion laughs" plan: 2^30 nodes through shared sub-objects (YAML aliases give
    # exactly this structure from a few hundred bytes); the node count stops the walk
    node: dict = {"type": "Laplace", "scale": 1}
    for _ in range(30):
        node = {"type": "Composed", "events": [node, node]}
    with pytest.raises(PlanError, match="at most 10000 event nodes"):
        plan_from_data(_plan(node))


def test_refuses_large_and_malformed_files(tmp_path):
    big = tmp_path / "big.json"
    big.write_text(" " * (LIMITS["max_bytes"] + 1))
    with pytest.raises(PlanError, match="at most 1000000 bytes"):
        load_plan(big)
    bad = tmp_path / "bad.json"
    bad.write_text("[" * 100_000)
    with pytest.raises(PlanError, match="not valid JSON"):
        load_plan(bad)
    nan = tmp_path / "nan.json"
    nan.write_text('{"dpaudit_plan": 1, "event": {"type": "Laplace", "scale": NaN}}')
    with pytest.raises(PlanError, match="finite number, got NaN"):
        load_plan(nan)
    tagged = tmp_path / "evil.yaml"
    tagged.write_text("!!python/object/apply:os.system ['true']\n")
    with pytest.raises(PlanError, match="not valid YAML"):
        load_plan(tagged)


def test_symbolic_events_cannot_be_written():
    from dpaudit.parse import parse_event

    with pytest.raises(PlanError, match=r"event.scale: only numeric rational"):
        event_to_node(parse_event("Laplace(b)", symbols=["b"]))
