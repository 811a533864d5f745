"""``dpaudit explain``: every candidate at every node, and ``explain THEOREM`` for a card."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from dpaudit.accountant import Accountant
from dpaudit.cli import main
from dpaudit.parse import parse_event
from dpaudit.teaching.cards import explain_card, find_card
from dpaudit.teaching.explanation import explain_candidates
from dpaudit.teaching.formulas import instantiate
from dpaudit.theorems.base import THEOREMS
from dpaudit.theorems.examples import EXAMPLES


def _values(entry: dict[str, Any]) -> dict[str, str]:
    return {v["symbol"]: v["value"] for v in entry["values"]}


def _json(capsys: Any, argv: list[str], code: int = 0) -> dict[str, Any]:
    assert main(argv) == code
    return json.loads(capsys.readouterr().out)


def test_json_lists_every_candidate_at_every_node(capsys: Any) -> None:
    data = _json(capsys, ["explain", "SelfComposed(Laplace(1), 10)", "--delta", "1e-6", "--json"])
    events = [n["event"] for n in data["nodes"]]
    assert events == ["Laplace(1)", "SelfComposed(Laplace(1), 10)"]
    leaf = {c["theorem"]: c for c in data["nodes"][0]["candidates"]}
    assert {"Laplace mechanism", "RDP of the Laplace mechanism"} <= set(leaf)
    assert _values(leaf["Laplace mechanism"]) == {"b": "1", "Delta": "1"}
    assert leaf["Laplace mechanism"]["formula"] == "epsilon = Delta/b"
    inner = {c["theorem"]: c for c in data["nodes"][1]["candidates"]}
    # the winner's theorem and the losers' are all there, each with its citation
    for name in ("basic composition", "advanced composition", "optimal composition"):
        assert inner[name]["citation"] == next(
            t.citation for t in THEOREMS.values() if t.name == name
        )
    top = data["candidates"]
    chosen = [c for c in top if c["status"] == "chosen"]
    assert len(chosen) == 1 and chosen[0]["theorem"] == data["guarantee"]["theorem"]
    assert chosen[0]["epsilon"] == data["guarantee"]["epsilon"]
    beaten = [c for c in top if c["status"] == "beaten"]
    assert beaten and all(c["epsilon"] >= chosen[0]["epsilon"] for c in beaten)
    adv = next(c for c in top if c["theorem"] == "advanced composition")
    assert _values(adv)["delta'"] == "1e-06"
    closed = math.sqrt(20 * math.log(1e6)) + 10 * (math.e - 1)
    assert adv["epsilon"] == pytest.approx(closed) and adv["epsilon"] >= closed * (1 - 1e-15)


def test_dominated_statements_are_shown_and_marked() -> None:
    g = Accountant().guarantee(parse_event("SelfComposed(Laplace(1), 10)"), 1e-6)
    ex = explain_candidates(g)
    statuses = {e.status for _, entries in ex.nodes for e in entries}
    assert {"chosen", "kept", "dominated"} <= statuses
    text = ex.text()
    assert "- pure DP implies zCDP [dominated]: (50)-zCDP" in text
    assert "* privacy loss distribution [chosen]" in text


def test_text_and_latex_carry_the_candidates(capsys: Any) -> None:
    assert main(["explain", "SelfComposed(Laplace(1), 10)", "--delta", "1e-6"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Why SelfComposed(Laplace(1), 10)")  # the walk-through first
    assert "Every candidate at every node" in out
    assert "optimal composition [beaten]" in out
    assert main(["explain", "SelfComposed(Laplace(1), 10)", "--delta", "1e-6", "--latex"]) == 0
    tex = capsys.readouterr().out
    assert r"\item[$\star$] \textbf{privacy loss distribution} (chosen;" in tex
    assert tex.count(r"\begin{itemize}") == tex.count(r"\end{itemize}")


@pytest.mark.parametrize(
    "name", ["advanced-composition", "ADVANCED_COMPOSITION", "Advanced Composition"]
)
def test_explain_theorem_by_name_any_case(capsys: Any, name: str) -> None:
    data = _json(capsys, ["explain", name, "--json"])
    card = THEOREMS["advanced_composition"]
    assert data["theorem"] == card.name and data["citation"] == card.citation
    assert data["assumptions"] == card.assumptions and data["statement"] == card.statement
    ex = data["example"]
    assert _values(ex) == {"epsilon": "1/10", "delta": "0", "k": "100", "delta'": "1e-06"}
    closed = math.sqrt(200 * math.log(1e6)) / 10 + 10 * (math.exp(0.1) - 1)
    assert ex["results"]["epsilon"] == pytest.approx(closed, rel=1e-14)
    assert ex["results"]["epsilon"] >= closed * (1 - 1e-15)  # rounded up


def test_explain_theorem_text_and_unknown_name(capsys: Any) -> None:
    assert main(["explain", "optimal-composition"]) == 0
    out = capsys.readouterr().out
    assert "Kairouz, Oh, Viswanath 2015, Theorem 3.3" in out and "example:" in out
    err = _json(capsys, ["explain", "advanced-compositon", "--json"], code=2)["error"]
    assert "closest: advanced-composition" in err["message"]
    assert "got 'advanced-compositon'" in err["message"]
    assert main(["explain", "nosuch"]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1  # the error is one line; the list is on stdout
    for card in THEOREMS.values():
        assert f"  {card.key.replace('_', '-')}: {card.name}" in out


@pytest.mark.slow  # 5-10 s: every card's example through the CLI
def test_every_card_with_a_bound_has_an_example_inside_its_domain() -> None:
    for key, card in THEOREMS.items():
        if not card.bound:
            continue
        assert key in EXAMPLES, key
        values = EXAMPLES[key]
        scalars = {k: v for k, v in values.items() if not isinstance(v, list)}
        checks = card.check(scalars)
        assert all(c.status == "verified" for c in checks), (key, checks)
        inst = instantiate(card, values)
        assert inst.missing == (), key
        assert all(r is not None and math.isfinite(r) for r in inst.results.values()), key


def test_card_example_matches_the_code_function() -> None:
    """The worked example is the card's bound; the accountant's function agrees (laplace)."""
    from dpaudit.theorems import primitives

    view = explain_card(find_card("laplace"))
    assert view.example is not None
    assert view.example.results["epsilon"] == float(primitives.laplace_epsilon(1, 1))


def test_guarantee_with_candidates_pickles_with_its_parameters() -> None:
    """Worker processes return guarantees: the nodes' steps and the values their theorems
    were applied at survive pickling."""
    import pickle

    g = Accountant().guarantee(parse_event("SelfComposed(Laplace(1), 10)"), "1e-6")
    h = pickle.loads(pickle.dumps(g))
    assert h == g
    assert [n.event for n in h.considered] == [n.event for n in g.considered]
    leaf = h.considered[0].found[0]
    assert leaf.theorem.key == "laplace" and dict(leaf.checks.params) == {"b": 1, "Delta": 1}
    assert explain_candidates(h).to_dict() == explain_candidates(g).to_dict()


def test_symbolic_candidates_carry_their_exact_epsilon(capsys: Any) -> None:
    data = _json(capsys, ["explain", "SelfComposed(Laplace(b), k)", "--symbols", "b,k", "--json"])
    (cand,) = data["candidates"]
    assert cand["status"] == "in the minimum"
    assert cand["epsilon"] is None and cand["epsilon_exact"] == "k/b"


def test_explain_names_what_was_given_and_why_a_method_is_missing(capsys: Any) -> None:
    argv = ["explain", "SelfComposed(Gaussian(4), 10)", "--delta", "1e-6"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert (
        "Given: count of SelfComposed = 10, sigma of Gaussian = 4, sensitivity of Gaussian "
        "(default) = 1, delta (the target) = 1e-06"
    ) in out
    assert "Methods with no candidate here (why):" in out
    assert "privacy loss distribution: not computed: the chosen bound" in out
    data = _json(capsys, [*argv, "--json"])
    assert {"where": "count of SelfComposed", "value": "10"} in data["given"]
    assert {a["method"] for a in data["absent"]} == {
        "advanced composition",
        "optimal composition",
        "privacy loss distribution",
    }
    assert main([*argv, "--latex"]) == 0
    assert "Methods with no candidate here:" in capsys.readouterr().out
