"""``dpaudit compare`` explains its columns: theorem, citation, assumptions, the card's formula
with the numbers of one k, and notes on the orderings computed from the numbers."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
import sympy

from dpaudit import events as ev
from dpaudit.cli import main
from dpaudit.teaching.comparison import compare_methods
from dpaudit.teaching.formulas import card_formula, card_latex, instantiate
from dpaudit.teaching.orderings import ordering_notes
from dpaudit.theorems.base import THEOREMS

KS = [1, 10, 100]


@pytest.fixture(scope="module")
def laplace() -> dict[str, Any]:
    """``dpaudit compare "Laplace(1)" --k 1,10,100 --json`` (run once: ~5 s)."""
    import io
    from contextlib import redirect_stdout

    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["compare", "Laplace(1)", "--k", "1,10,100", "--delta", "1e-6", "--json"]) == 0
    return json.loads(buf.getvalue())


def _values(entry: dict[str, Any]) -> dict[str, str]:
    return {v["symbol"]: v["value"] for v in entry["values"]}


def _card(name: str) -> Any:
    (card,) = [c for c in THEOREMS.values() if c.name == name]
    return card


def test_every_method_carries_its_theorem_citation_and_card_formula(laplace: dict) -> None:
    methods = {m["method"]: m for m in laplace["methods"]}
    assert set(methods) == set(laplace["epsilon"])
    for m in methods.values():
        card = _card(m["theorem"])
        assert m["citation"] == card.citation and m["citation"]
        assert m["assumptions"] == card.assumptions
        # the card's own formula, not a copy
        assert m["formula"] == card_formula(card)
        assert m["latex"] == card_latex(card)
        assert m["epsilon"] == laplace["epsilon"][m["method"]]
    adv = methods["advanced composition"]
    assert _values(adv) == {"epsilon": "1", "delta": "0", "k": "100", "delta'": "1e-06"}
    (eps,) = [s for s in adv["substituted"] if s["output"] == "epsilon"]
    assert "sqrt(100)" in eps["text"] and eps["result"] == adv["results"]["epsilon"]
    assert "Dwork, Rothblum, Vadhan 2010, Theorem III.3" in adv["citation"]


def test_substituted_formula_gives_the_accountants_number(laplace: dict) -> None:
    """The card's bound at the substituted numbers is the column's value (advanced, basic,
    zCDP, RDP: closed forms), and, for optimal composition, delta_g at the column's epsilon
    is the target delta."""
    methods = {m["method"]: m for m in laplace["methods"]}
    for name in (
        "advanced composition",
        "basic composition",
        "zCDP to (eps, delta)",
        "RDP to (eps, delta) (improved conversion)",
    ):
        m = methods[name]
        assert m["results"]["epsilon"] == pytest.approx(m["epsilon"]["100"], rel=1e-12), name
    opt = methods["optimal composition"]
    assert opt["results"]["delta"] == pytest.approx(1e-6, rel=1e-9)
    # advanced composition in closed form: sqrt(2k ln 1e6) + k (e - 1), k = 100
    closed = math.sqrt(200 * math.log(1e6)) + 100 * (math.e - 1)
    assert methods["advanced composition"]["results"]["epsilon"] == pytest.approx(closed)
    assert methods["advanced composition"]["results"]["epsilon"] >= closed * (1 - 1e-15)


def test_pld_below_optimal_is_explained_from_the_numbers(laplace: dict) -> None:
    eps = laplace["epsilon"]
    pld, opt = eps["privacy loss distribution"]["100"], eps["optimal composition"]["100"]
    assert pld < opt  # 71.5 < 83.5, the case the issue reports
    (note,) = [
        n
        for n in laplace["notes"]
        if n.startswith("privacy loss distribution is below optimal composition")
    ]
    assert f"{pld:.6g} vs {opt:.6g}" in note
    assert "optimal over *all* eps-DP mechanisms" in note and "mechanism-specific" in note
    assert "Laplace" in note


def test_no_note_claims_an_order_the_numbers_do_not_show(laplace: dict) -> None:
    eps = laplace["epsilon"]
    labels = sorted(eps, key=len, reverse=True)
    pattern = re.compile(r"^(.+) is below (.+) at every k listed")
    checked = 0
    for note in laplace["notes"]:
        m = pattern.match(note)
        if not m:
            continue
        low = next(lab for lab in labels if m.group(1) == lab)
        high = next(lab for lab in labels if m.group(2).startswith(lab))
        for k in map(str, KS):
            assert eps[low][k] <= eps[high][k] * (1 + 1e-6), (note, k)
        checked += 1
    assert checked >= 10


def test_text_output_shows_sources_formulas_and_notes(capsys: Any) -> None:
    assert main(["compare", "Laplace(1)", "--k", "1,10", "--at", "10"]) == 0
    out = capsys.readouterr().out
    assert "numbers substituted at k = 10" in out
    assert "Kairouz, Oh, Viswanath 2015, Theorem 3.3" in out
    assert "epsilon = sqrt(2)*1*sqrt(10)*sqrt(log(1/1/1000000))" not in out
    assert "Why the methods order as they do" in out
    assert "gives:     epsilon = sum_{i=1}^{10} 1 = 10 (rounded up)" in out
    assert "Sum(" not in out and "**" not in out


def test_at_must_be_a_listed_k(capsys: Any) -> None:
    assert main(["compare", "Laplace(1)", "--k", "1,10", "--at", "5", "--json"]) == 2
    err = json.loads(capsys.readouterr().out)["error"]
    assert "k_ref must be one of the listed k values" in err["message"]


# ---- the notes, on synthetic numbers (no accountant) -------------------------------------


class _M:
    def __init__(self, key: str, epsilons: dict[int, float]) -> None:
        self.theorem = THEOREMS[key]
        self.label = self.theorem.name
        self.epsilons = epsilons


def test_notes_follow_the_numbers_not_a_canned_order() -> None:
    opt = _M("optimal_composition", {1: 1.0, 10: 10.0})
    # PLD above optimal (as for randomized response plus discretisation error): the note
    # must say so, and give the worst-case reason, never "PLD is below"
    pld = _M("pld_fft", {1: 1.0000001, 10: 10.01})
    notes = ordering_notes(ev.RandomizedResponse(1, 2), [opt, pld], [1, 10], "1e-6")
    assert not any(n.startswith("privacy loss distribution is below") for n in notes)
    (note,) = [n for n in notes if n.startswith("optimal composition is below")]
    assert "worst case" in note and "10 vs 10.01" in note
    # the other way round for Laplace
    pld = _M("pld_fft", {1: 1.0, 10: 9.5})
    notes = ordering_notes(ev.Laplace(1), [opt, pld], [1, 10], "1e-6")
    (note,) = [n for n in notes if n.startswith("privacy loss distribution is below")]
    assert "(equal at k = 1)" in note and "mechanism-specific" in note


def test_crossing_methods_are_described_by_k_range() -> None:
    basic = _M("basic_composition", {1: 1.0, 10: 10.0, 1000: 1000.0})
    adv = _M("advanced_composition", {1: 6.9, 10: 33.8, 1000: 900.0})
    notes = ordering_notes(ev.Laplace(1), [basic, adv], [1, 10, 1000], "1e-6")
    (note,) = [n for n in notes if "cross" in n]
    assert "basic composition is below at k = 1, 10" in note
    assert "advanced composition is below at k = 1000" in note
    assert "2 ln(1/delta') = 27.6" in note


def test_instantiate_card_formula_against_closed_forms() -> None:
    card = THEOREMS["advanced_composition"]
    inst = instantiate(
        card, {"epsilon": sympy.Rational(1, 10), "delta": 0, "k": 10, "delta'": 1e-5}
    )
    closed = math.sqrt(20 * math.log(1e5)) / 10 + (math.exp(0.1) - 1)
    assert inst.results["epsilon"] == pytest.approx(closed, rel=1e-14)
    assert inst.results["epsilon"] >= closed * (1 - 1e-15)
    assert inst.missing == ()
    het = instantiate(THEOREMS["basic_composition"], {"epsilon": [1, 2, 3], "delta": [0, 0, 0]})
    assert het.results == {"epsilon": 6.0, "delta": 0.0}
    partial = instantiate(THEOREMS["zcdp_to_approx_cks20"], {"rho": 1, "delta": 1e-6})
    assert partial.missing == ("alpha",) and partial.results["epsilon"] is None


def test_comparison_object_table_matches_json() -> None:
    c = compare_methods(ev.PureDP(1), [1, 2], "1e-6")
    d = c.to_dict()
    assert d["epsilon"] == {m: {str(k): v for k, v in col.items()} for m, col in c.table().items()}
    assert d["k_substituted"] == 2


# ---- views that explain themselves (issue 34, part 4) -------------------------------------


@pytest.fixture(scope="module")
def gaussian() -> Any:
    return compare_methods("Gaussian(4)", [1, 10], "1e-6")


def test_gaussian_says_why_advanced_composition_and_pld_have_no_column(gaussian: Any) -> None:
    absent = {a.method: a.reason for a in gaussian.absent}
    assert set(absent) == {
        "advanced composition",
        "optimal composition",
        "privacy loss distribution",
    }
    assert "fixed (eps_0, delta_0)" in absent["advanced composition"]
    assert "Gaussian(4) has none" in absent["advanced composition"]
    assert "Gaussian mechanism is mu-GDP" in absent["advanced composition"]
    assert "analytic Gaussian mechanism) is exact" in absent["privacy loss distribution"]
    text = gaussian.text()
    assert "Methods without a column (why, from the accountant at k = 10):" in text
    d = gaussian.to_dict()
    assert {a["method"] for a in d["absent"]} == set(absent)
    # a Laplace mechanism has every expected column: nothing to explain
    assert compare_methods("Laplace(1)", [1, 10], "1e-6").absent == ()


def test_why_rdp_equals_zcdp_for_a_gaussian(gaussian: Any) -> None:
    (same,) = [n for n in gaussian.notes if "give the same epsilon" in n]
    assert "Renyi curve is exactly the line" in same and "one formula" in same
    (gap,) = [
        n
        for n in gaussian.notes
        if n.startswith(
            "RDP to (eps, delta) (improved conversion) is below zCDP to (eps, delta) at"
        )
    ]
    assert "the gap is the conversion" in gap  # not "the curve lies below the line"


def test_formulas_are_in_mathematical_notation(gaussian: Any) -> None:
    for c in (gaussian, compare_methods("Laplace(1)", [10], "1e-6")):
        text = c.text()
        for python in ("Sum(", "**", "Max(", "Min(", "[i]"):
            assert python not in text, python
    assert "epsilon = sum_{i=1}^{k} epsilon_i; delta = sum_{i=1}^{k} delta_i" in gaussian.text()
    for card in THEOREMS.values():
        if card.bound:
            formula = card_formula(card)
            assert "Sum(" not in formula and "**" not in formula, card.key


def test_given_values_are_marked(gaussian: Any, laplace: dict) -> None:
    basic = next(m for m in gaussian.methods if m.label == "basic composition")
    assert basic.values_text().startswith("k = 10 (given), epsilon = ")
    assert "delta = 1e-07" in basic.values_text()  # a part's delta, derived: not marked
    adv = next(m for m in laplace["methods"] if m["method"] == "advanced composition")
    given = {v["symbol"]: v["given"] for v in adv["values"]}
    assert given == {"epsilon": False, "delta": False, "k": True, "delta'": False}
    zcdp = next(m for m in gaussian.methods if m.label == "zCDP to (eps, delta)")
    assert "delta = 1e-06 (given)" in zcdp.values_text()


def test_compare_latex(capsys: Any) -> None:
    assert main(["compare", "Gaussian(4)", "--k", "1,10", "--latex"]) == 0
    tex = capsys.readouterr().out
    assert r"\begin{tabular}{lrr}" in tex and r"\end{tabular}" in tex
    assert r"\item[basic composition]" in tex
    assert r"\sum_{i=1}^{10} 1.18175" in tex
    assert "Methods without a column" in tex and "Sum(" not in tex
    for env in ("tabular", "description", "itemize"):
        assert tex.count(rf"\begin{{{env}}}") == tex.count(rf"\end{{{env}}}")
    assert r"10^{-6}" in tex  # 1e-06 in mathematical notation
    # a number put in for a symbol is wrapped once, by the printer, where it must be
    assert r"\left((" not in tex and "{((" not in tex and r"\left(\left(" not in tex
    assert main(["compare", "Gaussian(4)", "--k", "1", "--latex", "--json"]) == 2


@pytest.mark.slow
def test_the_plot_is_written_even_when_the_reader_stops_early(tmp_path: Any) -> None:
    """``dpaudit compare --plot x.png | head`` wrote no plot: the table went out first, the
    reader closed the pipe, and the broken pipe ended the command before the plot."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    plot = tmp_path / "x.png"
    env = {**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"}
    argv = [sys.executable, "-m", "dpaudit", "compare", "Laplace(10)", "--k", "1,10"]
    proc = subprocess.Popen(
        [*argv, "--plot", str(plot)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # `head -1`: one line, then the reader goes away
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert plot.read_bytes().startswith(b"\x89PNG")


# ---- every "gives:" line shows numbers; numbers wrapped once ------------------------------


def test_every_gives_line_of_a_gaussian_is_evaluated() -> None:
    """The analytic Gaussian's formula is put at the accountant's epsilon with Delta and sigma
    (the mechanism's own at k = 1, Delta = 1 and sigma = 1/mu composed), and the optimal
    zCDP conversion at the order alpha it was evaluated at: no "gives:" line keeps a symbol,
    each ends with its number."""
    for ks, ref in (([1], 1), ([1, 100], 100)):
        c = compare_methods("Gaussian(2)", ks, "1e-5", k_ref=ref)
        gives = [ln for ln in c.text().splitlines() if ln.strip().startswith("gives:")]
        assert len(gives) >= 5
        for line in gives:
            assert line.endswith("(rounded up)"), line
            rhs = line.split("=", 1)[1]
            for symbol in ("sigma", "Delta", "epsilon", "alpha", "rho", "tau"):
                assert symbol not in rhs, line
        analytic = next(m for m in c.methods if m.label == "analytic Gaussian mechanism")
        assert analytic.instance is not None and analytic.instance.missing == ()
        delta = analytic.instance.results["delta"]
        assert delta is not None and delta == pytest.approx(1e-5, rel=1e-8)
        values = analytic.instance.values
        assert values["Delta"] / values["sigma"] == (sympy.Rational(1, 2) if ref == 1 else 5)
    one = compare_methods("Gaussian(2)", [1], "1e-5")
    analytic = next(m for m in one.methods if m.label == "analytic Gaussian mechanism")
    assert "Delta = 1 (given), sigma = 2 (given)" in analytic.values_text()


def test_substituted_numbers_are_parenthesised_once() -> None:
    """(a - 1)/a at a = 1134/587 and log(delta) at 1e-5: parentheses only where the formula
    needs them, in text and LaTeX."""
    rdp = instantiate(
        THEOREMS["rdp_to_approx_bbgg20"],
        {"alpha": sympy.Rational(1134, 587), "delta": sympy.Rational(1, 10**5), "tau": 24},
    )
    text, tex = rdp.text["epsilon"], rdp.latex["epsilon"]
    assert "log((1134/587 - 1)/(1134/587))" in text and "log(1134/587)" in text
    assert "log(1e-05)" in text and "((" not in text.replace("log((1134", "log(1134")
    assert r"\log{\left(10^{-5} \right)}" in tex and r"\left((" not in tex
    assert r"\log{\left(\tfrac{1134}{587} \right)}" in tex
    gauss = instantiate(
        THEOREMS["gaussian_analytic"],
        {"epsilon": 1, "Delta": 1, "sigma": sympy.Rational(1, 5)},
    )
    # a fraction in a denominator keeps its parentheses: 1/(2*(1/5)), never 1/(2*1/5)
    assert "1/(2*(1/5))" in gauss.text["delta"] and "2*1/5" not in gauss.text["delta"]
    assert r"2 \left(\tfrac{1}{5}\right)" in gauss.latex["delta"]
    assert gauss.results["delta"] is not None
