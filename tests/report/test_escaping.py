"""User text in reports is inert: escaped in HTML (html.escape) and in Markdown (md_escape).

Hostile target titles, summaries, groups, reasons and mechanism names must come out as the
same text, never as a tag, a link, an image, emphasis or an extra table cell.  The Markdown is
rendered by a CommonMark renderer with raw HTML *allowed* (the worst case) and tables on.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from markdown_it import MarkdownIt

from dpaudit.report import Target, generate
from dpaudit.report.render import _inline, md_code, md_escape, to_html, to_markdown

HOSTILE = [
    "<script>alert(1)</script>",
    "| col | col |",
    "](javascript:alert(1))",
    "[click](javascript:alert(1))",
    "![img](http://evil.example/x.png)",
    "**bold** _em_ `code` ~~strike~~",
    "# heading",
    "> quote",
    "- item",
    "1. item",
    "&lt;b&gt; &amp; \\ back\\slash\\",
    "<img src=x onerror=alert(1)>",
    "quote \" and ' apostrophe",
    "line one\nline two\r\n<b>three</b>",
    "```\nfence\n```",
]

RENDER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, Any]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Any]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_renders_as_itself_in_markdown(text: str) -> None:
    flat = " ".join(text.splitlines())
    page = RENDER.render(to_markdown([("p", md_escape(text))]))
    parsed = _parse(page)
    assert [t for t, _ in parsed.tags] == ["p"], page
    assert "".join(parsed.text).strip() == flat.strip()


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_renders_as_itself_in_html(text: str) -> None:
    flat = " ".join(text.splitlines())
    parsed = _parse(_inline(md_escape(text)))
    assert parsed.tags == []
    assert "".join(parsed.text) == flat


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_stays_in_its_table_cell(text: str) -> None:
    blocks = [("table", ("name", "value"), [(md_escape(text), "x"), ("y", md_escape(text))])]
    for page in (RENDER.render(to_markdown(blocks)), to_html(blocks, text)):
        parsed = _parse(page)
        cells = [t for t, _ in parsed.tags if t == "td"]
        assert len(cells) == 4, page
        assert not {t for t, _ in parsed.tags} & {"script", "img", "a", "em", "strong", "code"}


def test_a_dollar_cannot_open_math() -> None:
    # GitHub and notebook viewers typeset $...$ (and $$...$$) as math in Markdown: a user's
    # "$x$" must stay text, which a backslash before each dollar makes it
    assert md_escape("cost $x$ or $$y$$") == r"cost \$x\$ or \$\$y\$\$"


@pytest.mark.parametrize("text", ["plain", "a`b", "``x``", "`lead", "trail`"])
def test_code_spans_show_their_text_literally(text: str) -> None:
    page = RENDER.render(md_code(text))
    parsed = _parse(page)
    assert [t for t, _ in parsed.tags] == ["p", "code"]
    assert "".join(parsed.text).strip() == text
    assert _parse(_inline(md_code(text))).text == [text]


class HostileMechanism:
    """Laplace(1) with a hostile name (it becomes the target's title)."""

    name = "<script>alert('name')</script> | x | ](javascript:alert(2))"

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.laplace())

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + rng.laplace(0.0, 1.0, n)

    pairs = ((0.0, 1.0),)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out: dict[str, str] = {}
    for fmt in ("md", "html"):
        target = Target(
            name="user/hostile_name-1",
            title=HostileMechanism.name,
            group="<b>group</b> | g",
            epsilon=1.0,
            summary="[click me](javascript:alert(3)) <img src=x onerror=alert(4)> **loud**",
            mechanism=HostileMechanism,
            samples=2_000,
        )
        directory = tmp_path_factory.mktemp(fmt)
        generate([target], directory, fmt=fmt, seed=1)
        for page in Path(directory).glob(f"*.{fmt}"):
            out[f"{fmt}:{page.stem}"] = page.read_text(encoding="utf-8")
    return out


@pytest.mark.slow
def test_reports_with_hostile_names_have_no_active_content(pages: dict[str, str]) -> None:
    assert len(pages) == 4  # a report and an index in each format
    for key, page in pages.items():
        html_page = RENDER.render(page) if key.startswith("md:") else page
        parsed = _parse(html_page)
        tags = {t for t, _ in parsed.tags}
        assert "script" not in tags, key
        for tag, attrs in parsed.tags:
            assert not any(a.startswith("on") for a in attrs), (key, tag, attrs)
            link = attrs.get("href") or attrs.get("src") or ""
            if tag == "img" and link.startswith("data:"):  # an embedded plot: base64 PNG only
                assert re.fullmatch(r"data:image/png;base64,[A-Za-z0-9+/]*={0,2}", link), key
                continue
            assert ":" not in link, (key, tag, link)  # relative paths only: no scheme
        text = "".join(parsed.text)
        assert "<script>alert('name')</script>" in text or "index" in key, key
        if "index" not in key:
            assert "[click me](javascript:alert(3)) <img src=x onerror=alert(4)> **loud**" in text
