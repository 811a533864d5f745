"""Rendering a collected report as Markdown or HTML.

A report is first laid out as a list of blocks (heading, paragraph, preformatted text,
table, image); :func:`to_markdown` and :func:`to_html` print the same blocks, so the two
formats always say the same thing.

Text in blocks is a small subset of Markdown: `code` spans, **bold** and backslash escapes.
Every piece of text that comes from a user (target names and titles, summaries, claims,
mechanism names, events, error messages, ...) enters a block only through :func:`md_escape`
(or :func:`md_code` inside a code span), so it can never open a link, an image, an HTML tag,
emphasis or a table cell; :func:`to_html` reads the same subset and escapes everything else
with ``html.escape``. Link targets are percent-encoded (:func:`_href`).
"""

from __future__ import annotations

import base64
import html
import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from dpaudit.report.markup import Block, md_code, md_escape
from dpaudit.report.one_run import one_run_blocks
from dpaudit.report.verdict import down, up

__all__ = [
    "index_blocks",
    "md_code",
    "md_escape",
    "png_data_uri",
    "report_blocks",
    "to_html",
    "to_markdown",
]

_PUNCT = frozenset(string.punctuation)

_PNG_DATA_URI = re.compile(r"data:image/png;base64,[A-Za-z0-9+/]*={0,2}")


def _href(link: str) -> str:
    """A link target percent-encoded: a relative path, never a scheme such as javascript:.
    The one exception is an embedded PNG (:func:`png_data_uri`), checked to be exactly
    base64 data."""
    if _PNG_DATA_URI.fullmatch(str(link)):
        return str(link)
    return quote(str(link), safe="/-._~")


_u = md_escape


def _fmt_claim(report: dict[str, Any]) -> list[Block]:
    t, c = report["target"], report.get("claim")
    blocks: list[Block] = [("h2", "Claim")]
    if c is None:
        blocks.append(
            ("p", f"No claim: the target declares ({t['epsilon']:g}, {t['delta']:g})-DP.")
        )
        return blocks
    rows = [
        ("statement", _u(c["statement"])),
        ("source", _u(f"{c['document']}, {c['theorem']}")),
        ("claimed epsilon", _u(c["epsilon"])),
        ("claimed delta", _u(c["delta"])),
        ("domain", _u(c["domain"]) if c["domain"] else "(a single point)"),
    ]
    if t["parameters"]:
        rows.append(
            ("audited instance", _u(", ".join(f"{k} = {v}" for k, v in t["parameters"].items())))
        )
    rows.append(("claim at the instance", f"({t['epsilon']:g}, {t['delta']:g})-DP"))
    if c.get("note"):
        rows.append(("note", _u(c["note"])))
    blocks.append(("table", ("", ""), rows))
    return blocks


def _g(x: Any) -> str:
    """A delta for display: 4 significant digits (the exact value is in the JSON)."""
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def report_blocks(report: dict[str, Any], images: dict[str, str]) -> list[Block]:
    """The blocks of one target's report.

    Args:
        report: a collected report (:func:`dpaudit.report.contents.collect`).
        images: ``{"curve": src, "growth": src, "one_run": src}`` of the plots written (any
            subset): a relative path
            (Markdown) or a ``data:`` URI (HTML, see :func:`png_data_uri`).

    Returns:
        The blocks, in reading order.
    """
    t = report["target"]
    v = report["verdict"]
    blocks: list[Block] = [
        ("h1", _u(t["title"])),
        ("verdict", v["kind"], f"Verdict: {_u(v['line'])}"),
    ]
    if t["summary"]:
        blocks.append(("p", _u(t["summary"])))
    meta = [
        ("target", _u(t["name"])),
        ("group", _u(t["group"])),
        (
            "expected",
            {
                "broken": "deliberately broken",
                "private": "private",
                "refuted": "a claim known not to hold as stated",
            }[t["expect"]],
        ),
    ]
    if t["source"]:
        meta.append(("code", _u(t["source"])))
    if t.get("audit_options"):  # e.g. edge_values=False, on_error='output'
        options = ", ".join(f"{k}={v!r}" for k, v in t["audit_options"].items())
        meta.append(("audit options", _u(options)))
    if t["true_epsilon"] is not None:
        meta.append(("true epsilon (known analytically)", _u(t["true_epsilon"])))
    blocks.append(("table", ("", ""), meta))
    blocks += _fmt_claim(report)

    blocks.append(("h2", "Declared plan"))
    plan = report.get("plan")
    blocks.append(("pre", plan["tree"]) if plan else ("p", "No declared plan."))

    blocks.append(("h2", "Accountant's guarantee"))
    g = report.get("guarantee")
    if not g:
        blocks.append(("p", "No plan to account."))
    elif "error" in g:
        blocks.append(("p", f"The accountant cannot bound the plan: {_u(g['error'])}"))
    else:
        lines = [
            f"epsilon <= {up(g['epsilon_upper'], 6)} (upper bound, rounded up; exact "
            f"{_u(g['epsilon_exact'])}) at delta = {g['delta']:g}, by {_u(g['theorem'])} "
            f"\\[{_u(g['citation'])}\\]."
        ]
        if g.get("epsilon_lower") is not None:
            lines.append(
                f" The true epsilon of the plan at this delta is at least "
                f"{down(g['epsilon_lower'], 6)} (certified, rounded down)."
            )
        blocks.append(("p", "".join(lines)))
        if g["candidates"]:
            blocks.append(("p", "Every method compared (the smallest valid upper bound wins):"))
            blocks.append(
                (
                    "table",
                    ("method", "epsilon (upper bound)", "delta", "chosen"),
                    [
                        (
                            _u(c["method"]),
                            up(c["epsilon_upper"], 6),
                            _u(_g(c["delta"])),
                            "yes" if c["chosen"] else "",
                        )
                        for c in g["candidates"]
                    ],
                )
            )
        blocks.append(("pre", g["derivation"]))
        if g.get("expected_exclusions"):
            blocks.append(
                ("p", f"Also not applicable, as expected: {_u(g['expected_exclusions'])}.")
            )

    blocks.append(("h2", "Verification of the claim"))
    ver = report.get("verification")
    if not ver:
        blocks.append(("p", "No claim to verify."))
    else:
        blocks.append(("p", f"Status: **{_u(ver['status'])}**. {_u(ver['detail'])}"))
        if (report.get("claim") or {}).get("correction"):
            blocks.append(("p", f"Correct statement: {_u(report['claim']['correction'])}"))
        for s in ver.get("steps") or []:
            blocks.append(("p", f"Proof step: {_u(s)}"))

    blocks.append(("h2", "Audit of the code"))
    a = report.get("audit")
    if not a:
        blocks.append(
            (
                "p",
                f"Not audited: {_u(t['not_audited'])}"
                if t.get("not_audited")
                else "Not audited: this algorithm has no auditable form wired to the report yet.",
            )
        )
    elif "error" in a:
        blocks.append(("p", f"The audit could not run: {_u(a['error'])}"))
    elif a.get("method") == "one-run":
        blocks += one_run_blocks(report)
    else:
        blocks.append(
            (
                "table",
                ("", ""),
                [
                    (
                        "certified lower bound",
                        f"epsilon >= {down(a['epsilon_lower'])} (rounded down, "
                        f"confidence {a['confidence']:.0%})",
                    ),
                    (
                        "point estimate",
                        f"{down(a['epsilon_estimate'])} (an estimate, not a bound)"
                        if isinstance(a["epsilon_estimate"], float)
                        else _u(a["epsilon_estimate"]),
                    ),
                    ("verdict of the audit", _u(a["verdict"])),
                    *(
                        [
                            (
                                "record domain searched",
                                _u(
                                    f"{t['records']['domain']}, {t['records']['relation']}, "
                                    f"dataset sizes {t['records']['sizes'][0]} to "
                                    f"{t['records']['sizes'][1]}"
                                ),
                            )
                        ]
                        if t.get("records")
                        else []
                    ),
                    ("neighbouring pair", _u(a["pair"])),
                    ("pairs searched", _u(a["pairs_searched"])),
                    ("event", _u(a["event"])),
                    ("direction", _u(a["direction"])),
                    (
                        "samples",
                        f"{a['selection_samples']:,} per dataset to choose the event and pair, "
                        f"then {a['samples_d0']:,} fresh per dataset to certify",
                    ),
                    ("hits in the event", f"{a['hits_d0']:,} on d0, {a['hits_d1']:,} on d1"),
                    (
                        "probability bounds",
                        f"P_lower(numerator) = {down(a['p_numerator_lower'], 6)}, "
                        f"P_upper(denominator) = {up(a['p_denominator_upper'], 6)}",
                    ),
                    ("confidence correction", _u(a["correction"])),
                    ("seed", _u(a["seed"])),
                    *[("warning", _u(w)) for w in a.get("warnings") or []],
                ],
            )
        )
    blocks += _curve_gaps(report.get("curve") or {})
    blocks.append(("h2", "Plots"))
    if images.get("curve"):
        blocks.append(("img", images["curve"], f"privacy curve of {_u(t['title'])}"))
    if images.get("growth"):
        blocks.append(("img", images["growth"], f"audit lower bound vs samples, {_u(t['title'])}"))
    if images.get("one_run"):
        blocks.append(
            ("img", images["one_run"], f"one-run audit and the theory curve, {_u(t['title'])}")
        )
    if not images:
        blocks.append(("p", "No numeric curve and no audit to plot."))
    # a user's target is named by its MODULE:OBJECT spec and options, not by its name
    regenerate = md_code(f"dpaudit report {t.get('regenerate') or t['name']} --out DIR --seed SEED")
    blocks.append(
        (
            "p",
            f"Regenerate: {regenerate} "
            f"(audit seed {_u(t['seed'])} derives from SEED and the target's name).",
        )
    )
    return blocks


#: The order of the index's groups; other groups follow alphabetically.
INDEX_GROUP_ORDER = ("source documents", "catalogue", "broken")


def index_blocks(
    reports: Sequence[dict[str, Any]], links: dict[str, str], seed: int, command: str
) -> list[Block]:
    """The index page: one verdict line per target, grouped.

    Args:
        reports: collected reports.
        links: target name -> relative link to its report.
        seed: the run's seed.
        command: the command that regenerates the reports.

    Returns:
        The blocks.
    """
    findings = sum(r["verdict"]["finding"] for r in reports)
    conf = next(
        (
            r["audit"]["confidence"]
            for r in reports
            if r.get("audit") and "confidence" in r["audit"]
        ),
        None,
    )
    intro = (
        f"{len(reports)} targets, seed {seed}. Regenerate with {md_code(command)}. "
        "Accountant epsilons are upper bounds rounded up"
    )
    if conf is not None:
        intro += (
            f"; audit epsilons are certified lower bounds rounded down, at {conf:.0%} "
            "confidence each"
        )
    blocks: list[Block] = [
        ("h1", "dpaudit audit reports"),
        ("p", intro + "."),
        (
            "p",
            f"Unexpected findings: {findings}."
            if findings
            else "No unexpected finding: no private target is flagged or refuted, and every "
            "deliberately broken one that is audited is caught.",
        ),
    ]
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in reports:
        groups.setdefault(r["target"]["group"], []).append(r)

    # a fixed order, whatever order the targets were collected in (the index is checked
    # byte for byte against a regeneration)
    def group_key(group: str) -> tuple[int, str]:
        return (
            INDEX_GROUP_ORDER.index(group)
            if group in INDEX_GROUP_ORDER
            else len(INDEX_GROUP_ORDER),
            group,
        )

    for group in sorted(groups, key=group_key):
        items = sorted(groups[group], key=lambda r: r["target"]["name"])
        blocks.append(("h2", _u(group)))
        rows = []
        for r in items:
            t, a, g = r["target"], r.get("audit") or {}, r.get("guarantee") or {}
            rows.append(
                (
                    ("link", _u(t["name"]), links[t["name"]]),
                    f"({t['epsilon']:g}, {t['delta']:g})",
                    up(g.get("epsilon_upper")),
                    _u((r.get("verification") or {}).get("status", "n/a")),
                    down(a["epsilon_lower"]) if "epsilon_lower" in a else "n/a",
                    ("verdict", r["verdict"]["kind"], _u(r["verdict"]["line"])),
                )
            )
        blocks.append(
            (
                "table",
                (
                    "target",
                    "claim (eps, delta)",
                    "accountant upper",
                    "claim status",
                    "audit lower",
                    "verdict",
                ),
                rows,
            )
        )
    return blocks


# ---- Markdown ----------------------------------------------------------------------------


def _md_cell(cell: Any) -> str:
    if isinstance(cell, tuple) and cell[0] == "link":
        return f"[{cell[1]}]({_href(cell[2])})"
    if isinstance(cell, tuple) and cell[0] == "verdict":
        return _md_cell(cell[2])
    # a pipe not already escaped would end the cell (user text arrives escaped)
    return re.sub(r"(?<!\\)\|", r"\\|", " ".join(str(cell).splitlines()))


def to_markdown(blocks: Sequence[Block]) -> str:
    """The blocks as GitHub-flavoured Markdown."""
    out: list[str] = []
    for b in blocks:
        kind = b[0]
        if kind == "h1":
            out.append(f"# {b[1]}")
        elif kind == "h2":
            out.append(f"## {b[1]}")
        elif kind == "p":
            out.append(b[1])
        elif kind == "verdict":
            out.append(f"> **{b[2]}**")
        elif kind == "pre":
            fence = "`" * max([3, *(len(r) + 1 for r in re.findall("`+", b[1]))])
            out.append(f"{fence}\n{b[1]}\n{fence}")
        elif kind == "img":
            out.append(f"![{b[2]}]({_href(b[1])})")
        elif kind == "table":
            header, rows = b[1], b[2]
            out.append("| " + " | ".join(_md_cell(h) or " " for h in header) + " |")
            out.append("|" + "---|" * len(header))
            out.extend("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows)
        out.append("")
    return "\n".join(out)


# ---- HTML --------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       color: #1b1b1b; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
td, th { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
pre { background: #f6f8fa; padding: 0.75rem; overflow-x: auto; font-size: 0.85rem; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5rem 0; }
.verdict { padding: 0.5rem 0.75rem; border-left: 0.4rem solid #888; background: #f7f7f7; }
.verdict.violation, .verdict.refuted { border-color: #c0392b; background: #fdecea; }
.verdict.consistent { border-color: #2e7d32; background: #edf7ed; }
.verdict.unsupported, .verdict.not-audited { border-color: #b7791f; background: #fff8e6; }
"""


def png_data_uri(path: str | Path) -> str:
    """A PNG file as a ``data:`` URI, so that an HTML page embeds its plots.

    Args:
        path: the PNG file.

    Returns:
        ``data:image/png;base64,...``.

    Raises:
        ValueError: when the file is not a PNG.
    """
    data = Path(path).read_bytes()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise ValueError(f"path must name a PNG file, got {str(path)!r}")
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _inline(text: str) -> str:
    """The blocks' Markdown subset as HTML: backslash escapes, `code` spans (any fence
    length) and **bold**; everything else escaped with ``html.escape``."""
    out: list[str] = []
    i, bold, n = 0, False, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in _PUNCT:
            out.append(html.escape(text[i + 1]))
            i += 2
        elif c == "`":
            backticks = re.match("`+", text[i:])
            assert backticks is not None  # text[i] is a backtick
            run = len(backticks.group())
            close = re.compile(f"(?<!`){'`' * run}(?!`)").search(text, i + run)
            if close is None:
                out.append(html.escape("`" * run))
                i += run
                continue
            code = text[i + run : close.start()]
            if len(code) > 1 and code[0] == code[-1] == " " and code.strip():
                code = code[1:-1]
            out.append(f"<code>{html.escape(code)}</code>")
            i = close.end()
        elif text.startswith("**", i):
            out.append("</strong>" if bold else "<strong>")
            bold = not bold
            i += 2
        else:
            out.append(html.escape(c))
            i += 1
    if bold:
        out.append("</strong>")
    return "".join(out)


def _plain(text: str) -> str:
    """The text a Markdown-subset string shows (backslash escapes removed), for attributes."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def _html_cell(cell: Any) -> str:
    if isinstance(cell, tuple) and cell[0] == "link":
        return f'<a href="{html.escape(_href(cell[2]))}">{_inline(cell[1])}</a>'
    if isinstance(cell, tuple) and cell[0] == "verdict":
        cls = re.sub(r"[^a-z-]", "", cell[1].replace(" ", "-"))
        return f'<span class="verdict-cell {cls}">{_inline(cell[2])}</span>'
    return _inline(str(cell))


def to_html(blocks: Sequence[Block], title: str) -> str:
    """The blocks as a standalone HTML page (inline CSS, no scripts)."""
    body: list[str] = []
    for b in blocks:
        kind = b[0]
        if kind in ("h1", "h2"):
            body.append(f"<{kind}>{_inline(b[1])}</{kind}>")
        elif kind == "p":
            body.append(f"<p>{_inline(b[1])}</p>")
        elif kind == "verdict":
            cls = re.sub(r"[^a-z-]", "", b[1].replace(" ", "-"))
            body.append(
                f'<p class="verdict {cls}" id="verdict"><strong>{_inline(b[2])}</strong></p>'
            )
        elif kind == "pre":
            body.append(f"<pre>{html.escape(b[1])}</pre>")
        elif kind == "img":
            body.append(f'<img src="{html.escape(_href(b[1]))}" alt="{html.escape(_plain(b[2]))}">')
        elif kind == "table":
            header, rows = b[1], b[2]
            lines = ["<table>"]
            if any(header):
                lines.append(
                    "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"
                )
            for row in rows:
                lines.append("<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row) + "</tr>")
            lines.append("</table>")
            body.append("\n".join(lines))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(str(title))}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _curve_gaps(curve: dict[str, Any]) -> list[Block]:
    """What the privacy curve's plot leaves out: the deltas without a bound (grouped by
    reason) and the accountant's errors."""
    blocks: list[Block] = []
    by_reason: dict[str, list[str]] = {}
    for u in curve.get("unbounded") or []:
        by_reason.setdefault(_u(u["reason"]), []).append(f"{u['delta']:g}")
    if by_reason:
        blocks.append(
            (
                "p",
                "Privacy curve: the accountant proves no bound at delta = "
                + "; ".join(f"{', '.join(ds)} ({why})" for why, ds in by_reason.items())
                + " (not plotted; `dpaudit explain` shows why).",
            )
        )
    if curve.get("failures"):
        blocks.append(
            (
                "p",
                "The accountant failed at some deltas of the privacy curve "
                "(left out of the plot): " + "; ".join(_u(f) for f in curve["failures"]),
            )
        )
    return blocks
