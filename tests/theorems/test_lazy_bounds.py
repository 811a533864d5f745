"""Theorem cards build their bounds on first read, and read exactly as before (issue 19, part 4).

Before, every card built its sympy ``bound`` at import (about half a second of every start-up).
Now a card holds a :class:`~dpaudit.theorems.base.Bound` over a zero-argument callable.
Evidence that nothing changed for a reader:

* ``card_bounds_snapshot.json`` is ``sympy.srepr`` of every registered card's bound, written
  from main at a6c9716 (eager bounds) before the change; every card must read the
  same structural expression, name for name, and the card set must be the same.  (When a card
  is added or a formula is deliberately changed, regenerate it:
  ``python tests/theorems/test_lazy_bounds.py > tests/theorems/card_bounds_snapshot.json``.)
* In a fresh interpreter, loading the whole registry builds no bound; reading one builds it.
* Thread safety: threads reading one fresh card at once call its factory once and all see the
  same dict; in a fresh interpreter, eight threads reading every card at once get the
  snapshot.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sympy

from dpaudit.theorems.base import THEOREMS, Bound, Theorem

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).with_name("card_bounds_snapshot.json")


def snapshot_of(cards) -> dict[str, dict[str, str]]:
    """``{key: {name: srepr(expr)}}`` for the given ``(key, card)`` pairs."""
    return {
        key: {name: sympy.srepr(expr) for name, expr in sorted(card.bound.items())}
        for key, card in sorted(cards)
    }


def _run(script: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_every_card_reads_the_expression_it_had_when_built_at_import():
    expected = json.loads(SNAPSHOT.read_text())
    assert sorted(THEOREMS) == sorted(expected), "card set changed: regenerate the snapshot"
    now = snapshot_of(THEOREMS.items())
    changed = [key for key in expected if now[key] != expected[key]]
    assert not changed, f"cards whose bound reads differently: {changed}"


def test_every_card_domain_reads_as_before():
    """The domain conditions' parses are now shared between cards (cached by text); each
    card's domain is structurally what it was (``card_domains_snapshot.json``, from main)."""
    expected = json.loads(SNAPSHOT.with_name("card_domains_snapshot.json").read_text())
    now = {
        key: None if card.domain is None else [sympy.srepr(c) for c in card.domain]
        for key, card in sorted(THEOREMS.items())
    }
    assert now == expected


def test_every_bound_is_a_mapping_of_sympy_expressions_in_the_card_symbols():
    for key, card in THEOREMS.items():
        assert isinstance(card.bound, Bound), key
        for name, expr in card.bound.items():
            assert isinstance(name, str) and isinstance(expr, sympy.Basic), (key, name)
        assert card.symbols() == frozenset(
            s for e in card.bound.values() for s in e.free_symbols
        ), key


def test_the_snapshot_comparison_detects_a_changed_formula():
    card = THEOREMS["laplace"]
    drifted = Theorem(
        key="t",
        name="t",
        citation="c",
        assumptions="a",
        statement="s",
        bound=Bound(lambda: {"epsilon": 2 * card.bound["epsilon"]}),
    )
    assert snapshot_of([("laplace", drifted)]) != snapshot_of([("laplace", card)])


def test_loading_the_registry_builds_no_bound_and_reading_builds_one():
    script = """
import json
from dpaudit.theorems.base import THEOREMS
built = sorted(k for k, c in THEOREMS.items() if c.bound.built and len(c.bound))
card = THEOREMS["rdp_pure"]
expr = card.bound["tau"]   # reads rdp_randomized_response's bound inside its own build
after = sorted(k for k, c in THEOREMS.items() if c.bound.built and len(c.bound))
print(json.dumps([built, after]))
"""
    built, after = json.loads(_run(script))
    assert built == []
    assert after == ["rdp_pure", "rdp_randomized_response"]


def test_concurrent_first_reads_build_once_and_agree():
    calls = []

    def factory():
        calls.append(threading.get_ident())
        time.sleep(0.05)  # a slow build: the other readers arrive while it runs
        return {"epsilon": sympy.Symbol("epsilon", positive=True) ** 2}

    card = Theorem(key="t", name="t", citation="c", assumptions="a", statement="s", bound=factory)
    assert not card.bound.built
    seen, barrier = [], threading.Barrier(8)

    def read():
        barrier.wait()
        seen.append(card.bound["epsilon"])

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(seen) == 8
    assert all(s is seen[0] for s in seen)


def test_threads_reading_every_card_at_once_in_a_fresh_interpreter():
    script = """
import json, threading, sympy
from dpaudit.theorems.base import THEOREMS
cards = sorted(THEOREMS.items())
results, barrier = [], threading.Barrier(8)
def read():
    barrier.wait()
    results.append({k: {n: sympy.srepr(e) for n, e in sorted(c.bound.items())} for k, c in cards})
threads = [threading.Thread(target=read) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(results))
"""
    results = json.loads(_run(script))
    expected = json.loads(SNAPSHOT.read_text())
    assert len(results) == 8
    assert all(r == expected for r in results)


def test_pickling_and_copying_keep_the_expressions():
    card = THEOREMS["advanced_composition"]
    again = pickle.loads(pickle.dumps(card))
    assert dict(again.bound) == dict(card.bound) and again.bound.built
    fresh = Bound(lambda: {"x": sympy.Integer(3)})
    assert pickle.loads(pickle.dumps(fresh))["x"] == 3


def test_a_plain_dict_is_accepted_and_wrapped():
    card = Theorem(
        key="t", name="t", citation="c", assumptions="a", statement="s", bound={"x": sympy.S.One}
    )
    assert isinstance(card.bound, Bound) and card.bound.built and card.bound == {"x": 1}
    assert not Theorem(key="u", name="u", citation="c", assumptions="a", statement="s").bound


def test_bad_bounds_are_type_errors():
    with pytest.raises(TypeError, match="mapping of sympy expressions or a zero-argument"):
        Bound(3)  # type: ignore[arg-type]
    lazy = Bound(lambda: [1, 2])  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="must return a mapping of sympy expressions, got list"):
        lazy["x"]


if __name__ == "__main__":  # regenerate the snapshot (see the module docstring)
    print(json.dumps(snapshot_of(THEOREMS.items()), indent=1, sort_keys=True))
