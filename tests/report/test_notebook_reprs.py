"""Guarantees, derivations, comparisons, theorem cards and audit results render themselves in
notebooks: ``_repr_html_`` is well-formed HTML carrying the numbers and citations, and
``_repr_latex_`` is one LaTeX math string (what Jupyter's MathJax renders)."""

from __future__ import annotations

import base64
from html.parser import HTMLParser

import pytest

from dpaudit import events as ev
from dpaudit.accountant import Accountant
from dpaudit.audit.result import AuditResult
from dpaudit.teaching.cards import explain_card
from dpaudit.teaching.comparison import compare_methods
from dpaudit.teaching.explanation import explain_candidates

#: Elements that have no end tag.
VOID = {"br", "img", "hr", "meta", "input", "col", "area", "base", "link", "source", "wbr"}


class _Checker(HTMLParser):
    """Collects text, images and tag balance; raises on a mismatched end tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.text: list[str] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            raise AssertionError(f"end tag </{tag}> does not close {self.stack[-1:]}")
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html_text: str) -> _Checker:
    c = _Checker()
    c.feed(html_text)
    c.close()
    assert c.stack == [], f"unclosed tags {c.stack}"
    return c


def _png(src: str) -> bytes:
    prefix = "data:image/png;base64,"
    assert src.startswith(prefix)
    data = base64.b64decode(src[len(prefix) :])
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return data


def test_checker_rejects_broken_html() -> None:
    with pytest.raises(AssertionError):
        parse("<div><b>x</div></b>")
    with pytest.raises(AssertionError):
        parse("<ul><li>x</ul>")


@pytest.fixture(scope="module")
def guarantee():
    return Accountant().guarantee(ev.SelfComposed(ev.Laplace(1), 10), "1e-6")


def test_guarantee_html_and_latex(guarantee) -> None:
    page = parse(guarantee._repr_html_())
    text = " ".join(page.text)
    assert f"{guarantee.epsilon_upper:.10g}" in text
    assert "privacy loss distribution" in text
    assert "Sommer, Meiser, Mohammadi 2019, Theorem 1" in text
    assert "Laplace mechanism" in text
    tex = guarantee._repr_latex_()
    assert tex.startswith("$") and tex.endswith("$") and tex.count("$") == 2
    assert f"{guarantee.epsilon_upper:.10g}" in tex


def test_derivation_candidates_html(guarantee) -> None:
    ex = explain_candidates(guarantee)
    text = " ".join(parse(ex._repr_html_()).text)
    for needle in ("[chosen]", "[beaten]", "[dominated]", "Kairouz, Oh, Viswanath 2015"):
        assert needle in text
    assert ex._repr_latex_() == guarantee._repr_latex_()


def test_comparison_html_has_table_sources_notes_and_plot() -> None:
    c = compare_methods(ev.PureDP(1), [1, 4], "1e-6")
    page = parse(c._repr_html_())
    text = " ".join(page.text)
    for m in c.methods:
        assert m.label in text and m.theorem.citation in text
        assert f"{m.epsilons[4]:.4g}" in text
    assert "Why the methods order as they do" in text
    (img,) = page.images
    _png(img)
    tex = c._repr_latex_()
    assert tex.startswith("$$\\begin{array}") and tex.endswith("\\end{array}$$")


def test_theorem_card_html() -> None:
    view = explain_card("advanced-composition")
    text = " ".join(parse(view._repr_html_()).text)
    assert "Dwork, Rothblum, Vadhan 2010, Theorem III.3" in text
    assert "6.308230951" in text  # the worked example, rounded up
    assert view._repr_latex_().count("$") == 2


def _audit(violation: bool) -> AuditResult:
    return AuditResult(
        epsilon_lower=1.23456 if violation else 0.5,
        epsilon_estimate=1.4,
        epsilon_claimed=1.0,
        delta=0.0,
        violation=violation,
        event="output > 0.5",
        direction="d0 / d1",
        pair="[0] vs [1]",
        hits_d0=900,
        hits_d1=200,
        samples_d0=1000,
        p_numerator_lower=0.88,
        p_denominator_upper=0.23,
        confidence=0.95,
        tests=3,
        correction="Bonferroni over 3 tests",
        seed=7,
        selection_samples=1000,
        pairs_searched=1,
        wall_time=0.5,
        mechanism="laplace",
    )


@pytest.mark.parametrize("violation", [True, False])
def test_audit_result_html_and_latex(violation: bool) -> None:
    r = _audit(violation)
    page = parse(r._repr_html_())
    text = " ".join(page.text)
    assert ("VIOLATION" in text) is violation
    assert "1.2345" in text if violation else "0.5000" in text  # rounded down
    assert "Bonferroni over 3 tests" in text and "900 of 1,000 on d0" in text
    (img,) = page.images
    _png(img)
    tex = r._repr_latex_()
    assert tex.count("$") == 2 and (">" in tex) is violation
