"""The theorem registry holds the same cards whatever is imported first.

Each case imports one entry point of the package in a fresh interpreter (so nothing was
imported before it), then reads :data:`dpaudit.theorems.THEOREMS`.  Before the registry loaded
its package on first read, the card set depended on this order (21 cards after importing
``dpaudit.theorems``, 58 after ``dpaudit.accountant``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: What is imported first in each fresh interpreter.
FIRST_IMPORTS = (
    "dpaudit.theorems.base",
    "dpaudit.theorems",
    "dpaudit.theorems.cover",
    "dpaudit.accountant",
    "dpaudit.verify",
    "dpaudit.cli",
)

SCRIPT = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
from dpaudit.theorems.base import THEOREMS
from dpaudit.events import EVENT_TYPES
print(json.dumps([sorted(THEOREMS), sorted(EVENT_TYPES)]))
"""


def _registries_after(first: str) -> tuple[list[str], list[str]]:
    """The theorem card names and the event names, after importing ``first`` first."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, first],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    cards, events = json.loads(out.stdout)
    return cards, events


def _cards_after(first: str) -> list[str]:
    return _registries_after(first)[0]


def test_the_parser_knows_every_event_whatever_is_imported_first() -> None:
    """Found by review: ``EMCover`` and the stability events were parseable only after
    something had imported their modules (``dpaudit.accountant`` did, ``dpaudit.parse``
    did not)."""
    for first in ("dpaudit.parse", "dpaudit.plans"):
        names = set(_registries_after(first)[1])
        assert {"EMCover", "UniformlyStable", "SubsampledCandidates", "LabelFlipped"} <= names, (
            first,
            names,
        )


@pytest.mark.slow  # 6 s: fresh interpreters
def test_the_card_set_does_not_depend_on_what_is_imported_first() -> None:
    sets = {first: _cards_after(first) for first in FIRST_IMPORTS}
    reference = sets[FIRST_IMPORTS[0]]
    assert len(reference) >= 58  # every family, the accountant's own cards included
    differ = {
        first: sorted(set(cards) ^ set(reference))
        for first, cards in sets.items()
        if cards != reference
    }
    assert not differ, f"card sets differ from {FIRST_IMPORTS[0]!r}'s: {differ}"


def test_the_accountants_cards_are_registered_without_importing_the_accountant() -> None:
    cards = set(_cards_after("dpaudit.theorems.base"))
    assert {
        "tightest_candidate",
        "pld_fft",
        "pld_pair_gaussian",
        "coin_lemma",
        "dagan_feldman_lemma8",
    } <= cards
