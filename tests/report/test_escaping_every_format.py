"""Every user-supplied text is inert in every report format.

The audit reports escaped a Target's title and summary, but a user's *mechanism* reaches them
through its name and docstring (``dpaudit report MODULE:OBJECT``), a plugin's learner through
its name, source, notes and regime labels (the learning-curve pages, Markdown, wrote them
raw), and a symbol named anything from Python through the LaTeX of ``account --latex``,
``explain --latex`` and the notebooks' ``_repr_latex_`` (three LaTeX escapers, one of which
escaped the braces of its own ``\\textbackslash{}``).  Markdown is rendered with raw HTML
*allowed* (the worst case), as in ``test_escaping.py``; JSON stays JSON.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sympy
from markdown_it import MarkdownIt

from dpaudit.accountant import account
from dpaudit.cli import main
from dpaudit.events import Laplace, PureDP, SelfComposed
from dpaudit.latex import LATEX_SPECIAL, latex_escape
from dpaudit.learning_curves.compute import CurvePoint, CurveSet
from dpaudit.learning_curves.pages import _index, learner_page
from dpaudit.report import MechanismClaim, generate, resolve_targets

RENDER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])

SCRIPT = "<script>alert(1)</script>"
IMAGE = "<img src=x onerror=alert(2)>"
HOSTILE = f"{SCRIPT} {IMAGE} `tick` | pipe | [a](javascript:alert(3)) **b** $x$ %&#_{{}}~^\\"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, Any]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Any]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _active(html_page: str) -> list[str]:
    """Tags or attributes that could run code or load something from elsewhere."""
    parser = _Tags()
    parser.feed(html_page)
    bad = []
    for tag, attrs in parser.tags:
        if tag in ("script", "iframe", "object", "embed"):
            bad.append(tag)
        bad += [f"{tag} {a}" for a in attrs if a.startswith("on")]
        link = attrs.get("href") or attrs.get("src") or ""
        embedded = re.fullmatch(r"data:image/png;base64,[A-Za-z0-9+/]*={0,2}", link)
        if ":" in link and not embedded:  # a relative path only: no scheme
            bad.append(f"{tag} -> {link}")
    return bad


# ---- a user's mechanism in the audit reports ----------------------------------------------


def hostile_mechanism(data: Any, rng: np.random.Generator) -> float:
    return float(len(data) + rng.laplace(0.0, 4.0))


hostile_mechanism.__doc__ = f"{HOSTILE}\n\nsecond paragraph"
hostile_mechanism.name = f"{SCRIPT} | x | {IMAGE}"  # type: ignore[attr-defined]
hostile_mechanism.arithmetic = "real"  # type: ignore[attr-defined]


def failing_mechanism(data: Any, rng: np.random.Generator) -> float:
    raise ValueError(f"bad input {IMAGE} | {SCRIPT}")


@pytest.fixture(scope="module")
def user_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    import sys

    sys.modules[__name__].hostile_mechanism = hostile_mechanism  # type: ignore[attr-defined]
    claim = MechanismClaim(epsilon=1.0, pairs=(([1, 2], [1]),), samples=2_000)
    out: dict[str, str] = {}
    for fmt in ("md", "html"):
        directory = tmp_path_factory.mktemp(fmt)
        for fn in ("hostile_mechanism", "failing_mechanism"):
            targets = resolve_targets([f"{__name__}:{fn}"], claim=claim)
            generate(targets, directory, fmt=fmt, seed=1, progress=False)
        for page in directory.glob(f"*.{fmt}"):
            out[f"{fmt}:{page.stem}"] = page.read_text(encoding="utf-8")
        for data in directory.glob("*.json"):
            out[f"json:{fmt}:{data.stem}"] = data.read_text(encoding="utf-8")
    return out


@pytest.mark.slow
def test_a_mechanisms_name_docstring_and_error_are_inert(user_pages: dict[str, str]) -> None:
    pages = {k: v for k, v in user_pages.items() if not k.startswith("json:")}
    assert len(pages) == 6  # two reports and an index, in each format
    for key, page in pages.items():
        html_page = RENDER.render(page) if key.startswith("md:") else page
        assert _active(html_page) == [], key
        assert "<script>alert" not in html_page and "<img src=x" not in html_page, key
    md = next(v for k, v in pages.items() if k.startswith("md:user--script"))
    text = re.sub(r"<[^>]+>", "", RENDER.render(md))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # shown as text, not run
    failing = next(v for k, v in pages.items() if k.startswith("md:") and "failing" in k)
    assert "The audit could not run" in failing


def test_json_reports_keep_the_text_exactly(user_pages: dict[str, str]) -> None:
    assert sum("user--script" in k for k in user_pages if k.startswith("json:")) == 2
    for key, data in user_pages.items():
        if key.startswith("json:") and "user--script" in key:
            report = json.loads(data)  # valid JSON, the strings as given
            assert report["target"]["title"] == hostile_mechanism.name  # type: ignore[attr-defined]
            assert report["target"]["summary"] == HOSTILE


# ---- learning-curve pages -----------------------------------------------------------------


def _curves() -> CurveSet:
    points = [
        CurvePoint(method, regime, dataset, axis, 100, 1.0, [0.1, 0.2], refused=refused)
        for dataset in (HOSTILE, "plain")
        for axis in ("n", "epsilon")
        for method, regime, refused in (
            (f"lrn {SCRIPT}", "defaults", None),
            (f"lrn {SCRIPT}", f"regime {IMAGE} |", None),
            (f"lrn {SCRIPT}", "defaults", f"refused {IMAGE} | {SCRIPT}"),
            ("non-private", "baseline", None),
        )
    ]
    return CurveSet(
        learner=f"lrn {SCRIPT}",
        task=f"task {IMAGE}",
        source=HOSTILE,
        privacy="pure",
        datasets=[(HOSTILE, f"description {IMAGE} | [x](javascript:y)"), ("plain", "plain")],
        ns=[100],
        epsilons=[1.0],
        fixed_epsilon=1.0,
        fixed_n=100,
        seeds=2,
        seed=0,
        delta=1e-6,
        points=points,
        notes=[f"note {SCRIPT} | {IMAGE}", f"diffprivlib {IMAGE}"],
        chance={HOSTILE: 0.5, "plain": 0.5},
    )


def test_learning_curve_pages_escape_a_learners_texts() -> None:
    curves = _curves()
    for page in (learner_page(curves, f"cmd {SCRIPT}", "x.png"), _index([curves], "cmd `x`")):
        html_page = RENDER.render(page)
        assert _active(html_page) == [], html_page
        assert "<script>" not in html_page and "<img src=x" not in html_page
    index = RENDER.render(_index([curves], "cmd"))
    parser = _Tags()
    parser.feed(index)
    rows = [t for t, _ in parser.tags if t == "tr"]
    cells = [t for t, _ in parser.tags if t in ("td", "th")]
    header = [t for t, _ in parser.tags if t == "th"]
    # every row has the header's cells: no pipe of a learner's text opened a cell
    assert len(header) >= 3 and len(cells) == len(header) * len(rows)


# ---- LaTeX ----------------------------------------------------------------------------------


def _well_formed(tex: str) -> None:
    """Balanced braces and math shifts once the escapes are removed, and no raw special
    character of text mode outside math."""
    bare = tex.replace(r"\textbackslash{}", "").replace(r"\~{}", "").replace(r"\^{}", "")
    bare = re.sub(r"\\[_%&#$~^{}]", "", bare)
    depth = 0
    for ch in bare:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, tex
    assert depth == 0, tex
    assert bare.count("$") % 2 == 0, tex
    text_parts = bare.split("$")[0::2]
    for part in text_parts:
        assert not set(part) & set("%&#~"), (part, tex)


NAME = "a_1%&$#~^{}\\z"


def test_latex_of_a_user_named_symbol_is_escaped_everywhere(
    capsys: pytest.CaptureFixture[str],
) -> None:
    x = sympy.Symbol(NAME, positive=True)
    g = account(PureDP(x))
    for tex in (g.latex(), g._repr_latex_()):
        _well_formed(tex)
        assert latex_escape(NAME) in tex and NAME not in tex
    g = account(SelfComposed(Laplace(x), 3))
    _well_formed(g.latex())
    from dpaudit.cli.explain import explain_latex

    _well_formed(explain_latex(g))


def test_one_latex_escaper() -> None:
    from dpaudit.accountant import render
    from dpaudit.cli import explain
    from dpaudit.teaching import render as teaching_render

    assert render._tex is latex_escape and explain._tex is latex_escape
    assert teaching_render.latex_escape is latex_escape
    assert latex_escape("\\{") == r"\textbackslash{}\{"  # the backslash's braces kept
    for ch, escaped in LATEX_SPECIAL.items():
        assert latex_escape(f"a{ch}b") == f"a{escaped}b"


def test_account_and_explain_latex_stay_well_formed(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["account", "SelfComposed(Laplace(10), 100)", "--delta", "1e-6", "--latex"],
        ["explain", "SelfComposed(Laplace(10), 100)", "--delta", "1e-6", "--latex"],
    ):
        assert main(argv) == 0
        _well_formed(capsys.readouterr().out.split("Every candidate")[0])


def test_the_checker_sees_raw_specials() -> None:
    with pytest.raises(AssertionError):
        _well_formed(r"\texttt{a_1%b}")
    with pytest.raises(AssertionError):
        _well_formed(r"\texttt{a{b}")
    _well_formed(r"\texttt{a\_1\%b} is $(x, 0)$")


def test_every_path_into_a_report_was_checked(tmp_path: Path) -> None:
    """Control: the hostile text does reach the pages (so the checks above test something)."""
    curves = _curves()
    page = learner_page(curves, "cmd", "x.png")
    assert "alert(1)" in page and "onerror" in page
