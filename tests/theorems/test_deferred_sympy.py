"""Importing the theorem modules makes no sympy object (issue 19, part 4).

Every module of :mod:`dpaudit.theorems` uses the deferred sympy of
:mod:`dpaudit.deferred_imports`; at import no module-level code reads it: the cards' domains
are parsed on first read (:class:`~dpaudit.theorems.base.Conditions`), their bounds' symbols
are made on first read, and :data:`~dpaudit.theorems.examples.EXAMPLES` and
:data:`~dpaudit.theorems.cover.LAMBDA_STATED_MAX` are built on first read.  Evidence:

* the guard of ``tests/tooling/deferred_reads.py`` (whose control test is in
  ``tests/tooling/test_deferred_imports.py``) finds no read located in ``dpaudit/theorems``
  while every module of the package is imported in a fresh interpreter;
* after loading the whole registry no domain is parsed; reading one parses that one only;
* the domains read as before (``test_lazy_bounds.py`` compares them with the snapshot from
  main), a malformed condition is still refused when the card is made, threads reading a
  fresh domain at once parse it once, and pickling keeps it.

Checked to fail: with a ``_X = sympy.Integer(1)`` appended to ``zcdp.py`` the first test
reports ``dpaudit/theorems/zcdp.py:...: sympy.Integer``; without the lock in
``Conditions.relations`` the threads parse each condition several times.
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
from unittest import mock

import pytest
import sympy

import dpaudit.theorems.conditions as conditions_module
from dpaudit.theorems import cover, examples
from dpaudit.theorems.base import THEOREMS, Bound, Conditions, Theorem, conditions

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(
    f"dpaudit.theorems.{p.stem}" for p in (ROOT / "dpaudit" / "theorems").glob("[!_]*.py")
)


def _run(*args: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert out.returncode in (0, 1), out.stderr[-2000:]
    return out.stdout


def test_importing_every_theorem_module_reads_no_sympy_attribute():
    assert len(MODULES) >= 14 and "dpaudit.theorems.base" in MODULES
    lines = _run("tests/tooling/deferred_reads.py", "dpaudit.theorems", *MODULES).splitlines()
    here = [line for line in lines if line.startswith(os.path.join("dpaudit", "theorems", ""))]
    assert here == []


def test_loading_the_registry_parses_no_domain_and_a_read_parses_one():
    script = """
import json
from dpaudit.theorems.base import THEOREMS
cards = dict(THEOREMS.items())
parsed = sorted(k for k, c in cards.items() if c.domain is not None and c.domain.parsed)
str(THEOREMS["laplace"].domain[0])
after = sorted(k for k, c in cards.items() if c.domain is not None and c.domain.parsed)
print(json.dumps([len(cards), parsed, after]))
"""
    count, parsed, after = json.loads(_run("-c", script))
    assert count >= 40 and parsed == [] and after == ["laplace"]


def test_a_domain_reads_as_the_tuple_of_its_relations():
    card = Theorem(
        key="t", name="t", citation="c", assumptions="a", statement="s",
        domain=("0 < delta' < 1", "k >= 1"),
    )  # fmt: skip
    assert isinstance(card.domain, Conditions) and not card.domain.parsed
    expected = conditions("0 < delta' < 1", "k >= 1")
    assert len(card.domain) == 3 and card.domain.parsed
    assert card.domain == expected and tuple(card.domain) == expected
    assert card.domain[1:] == expected[1:] and hash(card.domain) == hash(expected)
    assert repr(card.domain) == repr(expected)
    empty = Theorem(key="u", name="u", citation="c", assumptions="a", statement="s", domain=())
    assert not empty.domain and empty.domain == ()
    again = pickle.loads(pickle.dumps(card))
    assert again.domain == expected


def test_a_malformed_condition_is_refused_when_the_card_is_made():
    with pytest.raises(ValueError, match="must be a comparison such as"):
        Conditions("epsilon")
    with pytest.raises(ValueError, match="must be a comparison such as"):
        Theorem(key="t", name="t", citation="c", assumptions="a", statement="s", domain=("< 1",))
    with pytest.raises(ValueError, match="must be a comparison"):
        Conditions(sympy.Symbol("epsilon", positive=True) > 0)  # evaluated to True


def test_threads_reading_a_fresh_domain_parse_it_once():
    domain = Conditions("0 < q <= 1", "sigma > 0")
    calls: list[str] = []
    parse = conditions_module._parse.__wrapped__

    def counting(condition: str):
        calls.append(condition)
        time.sleep(0.05)  # a slow parse: the other readers arrive while it runs
        return parse(condition)

    seen: list[tuple] = []
    barrier = threading.Barrier(8)

    def read() -> None:
        barrier.wait()
        seen.append(domain.relations())

    with mock.patch.object(conditions_module, "_parse", counting):
        threads = [threading.Thread(target=read) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert calls == ["0 < q <= 1", "sigma > 0"]
    assert len(seen) == 8 and all(s is seen[0] for s in seen)


def test_the_lazy_constants_read_as_before():
    stated_max = cover.LAMBDA_STATED_MAX
    assert isinstance(stated_max, sympy.Rational) and stated_max == sympy.Rational(5, 4)
    assert examples.EXAMPLES is examples.EXAMPLES  # built once
    assert examples.EXAMPLES["amplification_poisson"] == {
        "epsilon": 1,
        "delta": sympy.Rational(1, 10**6),
        "q": sympy.Rational(1, 100),
    }
    with pytest.raises(AttributeError, match="has no attribute 'NOPE'"):
        cover.NOPE  # noqa: B018


def test_a_bound_over_positive_symbols_is_the_formula_in_them():
    bound = Bound.over_positive("b Delta", lambda b, Delta: {"epsilon": Delta / b})
    assert not bound.built
    b, Delta = sympy.symbols("b Delta", positive=True)
    assert bound["epsilon"] == Delta / b and bound.built
    assert Bound.over_positive("k", lambda k: {"x": k})["x"] == sympy.Symbol("k", positive=True)
    assert THEOREMS["laplace"].symbols() == frozenset({b, Delta})
