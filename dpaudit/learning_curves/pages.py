"""The pages of the learning curves: per learner a PNG, a Markdown page and a JSON file, and
an index page (:func:`write_pages`).  Nothing in them depends on the clock or the machine
(no timings), so regenerating with the same seed and code gives the same files.

Every text a learner's package supplies (its name, task, source, notes, regime labels, the
messages of refused runs) and the datasets' descriptions enter a page only through
:func:`dpaudit.report.markup.md_escape` (or a code span, :func:`~dpaudit.report.markup.md_code`),
as in the audit reports: it can never open a link, an image, an HTML tag or a table cell."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any
from urllib.parse import quote

from dpaudit.learning_curves.compute import CurvePoint, CurveSet
from dpaudit.report.markup import md_code, md_escape

_u = md_escape


def _href(name: str) -> str:
    """A relative link target, percent-encoded (never a scheme such as javascript:)."""
    return quote(name, safe="/-._~")


__all__ = ["against_diffprivlib", "curve_plot", "learner_page", "verdict", "write_pages"]

_SAVE: dict[str, Any] = {"format": "png", "dpi": 90, "metadata": {"Software": None}}
_STYLE = {"non-private": ("black", "s", "--"), "diffprivlib": ("tab:green", "^", ":")}
_REGIME_COLOURS = ("tab:blue", "tab:orange", "tab:purple", "tab:brown")


def _plot_text(text: str) -> str:
    """Text for a matplotlib label or title: a ``$`` would start mathtext (and an unmatched
    one fail the whole plot)."""
    return text.replace("$", r"\$")


def _label(method: str, regime: str, learner: str) -> str:
    if method == learner:
        text = method if regime == "defaults" else f"{method} [{regime}]"
        return _plot_text(text)
    return {
        "non-private": "non-private LogisticRegression",
        "diffprivlib": "diffprivlib LogisticRegression",
    }.get(method, _plot_text(method))


def curve_plot(curves: CurveSet, path: Path) -> None:
    """One row per dataset of two panels: error against n, error against epsilon; a point
    is the median over the seeds, its bar the first to third quartile; the dotted grey line
    is the error of always answering the majority class."""
    from matplotlib.figure import Figure  # outside pyplot: no backend is switched

    rows = len(curves.datasets)
    fig = Figure(figsize=(11, 3.3 * rows))
    axes = fig.subplots(rows, 2, squeeze=False)
    for r, (dataset, _) in enumerate(curves.datasets):
        for c, axis in enumerate(("n", "epsilon")):
            ax = axes[r][c]
            regimes = 0
            for (method, regime), pts in curves.select(dataset=dataset, axis=axis).items():
                pts = [p for p in pts if p.refused is None and p.errors]
                if not pts:
                    continue
                if method == curves.learner:
                    colour, marker, line = _REGIME_COLOURS[regimes % 4], "o", "-"
                    regimes += 1
                else:
                    colour, marker, line = _STYLE.get(method, ("grey", "x", "-."))
                xs = [p.n if axis == "n" else p.epsilon for p in pts]
                medians = [p.median for p in pts]
                spread = [
                    [max(0.0, m - p.quartiles[0]) for m, p in zip(medians, pts, strict=True)],
                    [max(0.0, p.quartiles[1] - m) for m, p in zip(medians, pts, strict=True)],
                ]
                ax.errorbar(
                    xs,
                    medians,
                    yerr=spread,
                    color=colour,
                    marker=marker,
                    linestyle=line,
                    capsize=3,
                    label=_label(method, regime, curves.learner),
                )
            chance = curves.chance.get(dataset)
            if chance is not None:
                ax.axhline(chance, color="grey", linestyle=":", label="majority class")
            ax.set_xscale("log")
            ticks = sorted(
                {
                    p.n if axis == "n" else p.epsilon
                    for p in curves.points
                    if p.dataset == dataset and p.axis == axis
                }
            )
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.minorticks_off()
            ax.set_ylim(-0.02, 0.75)
            ax.set_xlabel("training rows n" if axis == "n" else "epsilon")
            ax.set_ylabel("test error")
            fixed = (
                f"epsilon = {curves.fixed_epsilon:g}"
                if axis == "n"
                else f"n = {_fixed_n(curves, dataset)}"
            )
            ax.set_title(_plot_text(f"{dataset}: error against {axis} ({fixed})"), fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=9)
    fig.suptitle(
        _plot_text(
            f"{curves.learner} ({curves.privacy}; median and quartiles over {curves.seeds} seeds)"
        )
    )
    fig.tight_layout(rect=(0, 0.35 / rows if rows > 1 else 0.12, 1, 1 - 0.1 / rows))
    fig.savefig(path, **_SAVE)


def _fixed_n(curves: CurveSet, dataset: str) -> int:
    ns = [p.n for p in curves.points if p.dataset == dataset and p.axis == "epsilon"]
    return ns[0] if ns else curves.fixed_n


def _largest(
    curves: CurveSet, dataset: str, method: str, regime: str | None = None
) -> CurvePoint | None:
    """The fitted point at the largest n of ``method`` (at the defaults, or at ``regime``)."""
    regimes = ("defaults", "baseline") if regime is None else (regime,)
    pts = [
        p
        for p in curves.points
        if p.dataset == dataset
        and p.axis == "n"
        and p.method == method
        and p.regime in regimes
        and p.refused is None
        and p.errors
    ]
    return max(pts, key=lambda p: p.n) if pts else None


def _regimes(curves: CurveSet) -> list[str]:
    """The learner's labelled regimes other than its defaults, in drawing order."""
    seen: dict[str, None] = {}
    for p in curves.points:
        if p.method == curves.learner and p.regime != "defaults":
            seen.setdefault(p.regime)
    return list(seen)


def _skipped(curves: CurveSet, dataset: str, regime: str) -> str:
    """Why the curves did not run ``regime`` at the larger n of ``dataset`` ("" if they did)."""
    for p in curves.points:
        same = p.dataset == dataset and p.method == curves.learner and p.regime == regime
        if same and p.axis == "n" and p.skipped:
            return p.skipped
    return ""


def verdict(curves: CurveSet, dataset: str, regime: str | None = None) -> str:
    """One honest phrase on the learner's median error at the largest n (defaults, or the
    labelled ``regime``) against the majority-class error: ``learns``, ``weak``, ``near
    chance`` or ``worse than the majority class``."""
    p = _largest(curves, dataset, curves.learner, regime)
    chance = curves.chance.get(dataset)
    if p is None or chance is None:
        return "no point fitted"
    if p.median > chance + 0.05:
        return "worse than the majority class"
    if p.median >= chance - 0.05:
        return "near chance"
    if p.median <= chance / 2:
        return "learns"
    return "weak"


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"


def _spread(p: CurvePoint) -> str:
    """``median [q1, q3]`` of a point."""
    q1, q3 = p.quartiles
    return f"{p.median:.3f} [{q1:.3f}, {q3:.3f}]"


#: Why a learner's guarantee differs from diffprivlib's (epsilon-DP LogisticRegression, by
#: objective perturbation), by privacy kind.
_KIND = {
    "pure": "both are epsilon-DP (diffprivlib's LogisticRegression perturbs the objective, "
    "Chaudhuri, Monteleoni, Sarwate 2011): the guarantees are of the same strength, so the "
    "difference is the algorithm's",
    "approximate": "diffprivlib's guarantee is the stronger one (pure epsilon-DP, against "
    "this learner's (epsilon, delta)-DP)",
    "label": "this learner's guarantee is the weaker one (it protects the labels only; "
    "diffprivlib protects whole records)",
    "prediction": "the guarantees differ in kind (this learner releases no model: each "
    "answered prediction is epsilon-private and k answers cost k epsilon; diffprivlib "
    "releases one epsilon-DP model)",
}


def against_diffprivlib(curves: CurveSet, dataset: str, regime: str | None = None) -> str:
    """One plain sentence comparing the learner's median error at the largest n with
    diffprivlib's on the same draws (``""`` when diffprivlib was not run): *worse*, *better*
    or *on a par* (within 0.02), with why when worse (the privacy kinds, and the learner
    class's ``PEER_NOTE`` read from the registry)."""
    p = _largest(curves, dataset, curves.learner, regime)
    if p is None:
        return ""
    peer = [
        q
        for q in curves.points
        if q.dataset == dataset
        and q.method == "diffprivlib"
        and q.axis == "n"
        and q.n == p.n
        and q.errors
    ]
    if not peer:
        return ""
    a, b = p.median, peer[0].median
    where = f"{a:.3f} against diffprivlib's {b:.3f} at n = {p.n}"
    if a > b + 0.02:
        why = _KIND.get(curves.privacy, "")
        note = curves.peer_note
        return f"worse than diffprivlib ({where}): {why}" + (f"; {note}" if note else "") + "."
    if a < b - 0.02:
        return f"better than diffprivlib ({where})."
    return f"on a par with diffprivlib ({where}, within 0.02)."


def learner_page(curves: CurveSet, command: str, image: str) -> str:
    """The Markdown page of one learner."""
    lines = [
        f"# Learning curves: {md_code(curves.learner)}",
        "",
        f"{_u(curves.source)}. Task: {_u(curves.task)}; privacy: {_u(curves.privacy)}.",
        "",
        f"Generated by {md_code(command)} (base seed {curves.seed}, {curves.seeds} seeds, delta = "
        f"{curves.delta:g} for the approximate learners). Each point is the median test error "
        "over the seeds, its bar the first to third quartile (the spread of the runs over "
        "seeds, not a bound). The learner runs at its defaults (`regime='practical'`, tuned "
        "data-independent constants) and at the paper's constants (`regime='paper'`), with "
        "the dataset's public row-norm bound as `feature_norm` and `fit_intercept` as the "
        "data need, where it takes them; the accounted epsilon is the largest the accountant "
        "certified for the fitted runs (an upper bound, never above the epsilon asked). "
        "Baselines on the same draws: scikit-learn's non-private LogisticRegression (a floor) "
        "and diffprivlib's epsilon-DP LogisticRegression at the same epsilon.",
        "",
        f"![{_u(curves.learner)}]({_href(image)})",
        "",
        "## What the curves show",
        "",
    ]
    for dataset, _ in curves.datasets:
        p = _largest(curves, dataset, curves.learner)
        base = _largest(curves, dataset, "non-private")
        chance = curves.chance.get(dataset)
        if p is None:
            lines.append(f"* {_u(dataset)}: the learner fitted no point (see the refusals below).")
            continue
        peer = against_diffprivlib(curves, dataset)
        lines.append(
            f"* {_u(dataset)}: at n = {p.n} and epsilon = {curves.fixed_epsilon:g} the median test "
            f"error is {_spread(p)} (quartiles in brackets), against {_fmt(chance)} for the "
            f"majority class and {_fmt(base.median if base else None)} for non-private "
            f"logistic regression: **{verdict(curves, dataset)}**"
            + (f"; {_u(peer)}" if peer else ".")
        )
        for regime in _regimes(curves):
            q = _largest(curves, dataset, curves.learner, regime)
            if q is not None:
                lines.append(
                    f"  * *{_u(regime)}*: {_spread(q)} at n = {q.n}: "
                    f"**{verdict(curves, dataset, regime)}**"
                    + (f" ({_u(why)})." if (why := _skipped(curves, dataset, regime)) else ".")
                )
    lines += ["", "## Notes", ""]
    lines += [f"* {_u(note)}" for note in curves.notes]
    lines += [f"* Data, {_u(name)}: {_u(text)}." for name, text in curves.datasets]
    lines += ["", "## Numbers", ""]
    for dataset, _ in curves.datasets:
        for axis in ("n", "epsilon"):
            fixed = (
                f"epsilon = {curves.fixed_epsilon:g}"
                if axis == "n"
                else f"n = {_fixed_n(curves, dataset)}"
            )
            lines += [
                f"### {_u(dataset)}: error against {axis} ({fixed})",
                "",
                "| method | regime | n | epsilon | median error | quartiles | mean | seeds | "
                "accounted epsilon |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            ]
            for (method, regime), pts in curves.select(dataset=dataset, axis=axis).items():
                if method == "non-private" and axis == "epsilon":
                    pts = pts[:1]  # the same fit at every epsilon
                for p in pts:
                    eps = "-" if method == "non-private" else f"{p.epsilon:g}"
                    if p.refused is not None or p.skipped is not None:
                        reason = f"refused: {p.refused}" if p.refused is not None else p.skipped
                        lines.append(
                            f"| {_u(method)} | {_u(regime)} | {p.n} | {eps} | {_u(reason or '')} "
                            "| | | | |"
                        )
                        continue
                    q1, q3 = p.quartiles
                    lines.append(
                        f"| {_u(method)} | {_u(regime)} | {p.n} | {eps} | {p.median:.3f} | "
                        f"[{q1:.3f}, {q3:.3f}] | {p.mean:.3f} | {len(p.errors)} | "
                        f"{_fmt(p.accounted_epsilon, 4)} |"
                    )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _json(curves: CurveSet) -> str:
    data: dict[str, Any] = {k: v for k, v in vars(curves).items() if k not in ("points",)}
    data["points"] = [p.to_dict() for p in curves.points]
    for p in data["points"]:
        p.pop("seconds", None)
    return json.dumps(data, indent=1, sort_keys=True, allow_nan=True) + "\n"


def write_pages(all_curves: list[CurveSet], out: str | Path, command: str) -> list[Path]:
    """Write ``<learner>.png``, ``<learner>.md``, ``<learner>.json`` per learner and
    ``index.md`` into ``out`` (created).  Other files in ``out`` are left alone.

    Returns:
        The paths written.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for curves in all_curves:
        image = out / f"{curves.learner}.png"
        curve_plot(curves, image)
        page = out / f"{curves.learner}.md"
        page.write_text(learner_page(curves, command, image.name), encoding="utf-8")
        data = out / f"{curves.learner}.json"
        data.write_text(_json(curves), encoding="utf-8")
        written += [image, page, data]
    index = out / "index.md"
    index.write_text(_index(all_curves, command), encoding="utf-8")
    return [*written, index]


def _index(all_curves: list[CurveSet], command: str) -> str:
    lines = [
        "# Learning curves of the private learners",
        "",
        f"Generated by {md_code(command)}. Per learner: test error against n (at a fixed epsilon) "
        "and against epsilon (at a fixed n), on synthetic data of its task (for the halfspace "
        "learners 000's margin distribution in d = 5, 20 and 100) and on two real datasets "
        "bundled with scikit-learn (breast cancer; the digits turned binary), as the median "
        "and quartiles over seeds, beside non-private logistic regression and diffprivlib's "
        "epsilon-DP LogisticRegression fitted on the same draws; notes state the source "
        "document's own sample-complexity numbers where its constants cannot learn at "
        "practical n. Each learner runs at its defaults (tuned, data-independent constants) "
        "and, in italics, at the paper's constants (`regime='paper'`). A cell is the median "
        "test error at the largest n (epsilon as in the header) and its verdict against the "
        "majority class (learns: at most half its error; weak: between; near chance: within "
        "0.05 of it; worse: more than 0.05 above it).",
    ]
    groups: dict[tuple[str, ...], list[CurveSet]] = {}
    for c in all_curves:
        groups.setdefault(tuple(name for name, _ in c.datasets), []).append(c)
    for names, group in groups.items():
        eps = group[0].fixed_epsilon
        lines += [
            "",
            f"## {_u(', '.join(sorted({c.task for c in group})))} learners (epsilon = {eps:g})",
            "",
            "| learner | privacy | " + " | ".join(_u(n) for n in names) + " |",
            "| --- | --- | " + " | ".join("---:" for _ in names) + " |",
        ]
        for c in group:
            for regime in [None, *_regimes(c)]:
                name = f"[{_u(c.learner)}]({_href(c.learner + '.md')})"
                cells = [name if regime is None else f"{name} *{_u(regime)}*", _u(c.privacy)]
                for dataset in names:
                    p = _largest(c, dataset, c.learner, regime)
                    at = f", n = {p.n}" if p and _skipped(c, dataset, regime or "defaults") else ""
                    cells.append(
                        f"{p.median:.3f} ({verdict(c, dataset, regime)}{at})" if p else "-"
                    )
                lines.append("| " + " | ".join(cells) + " |")
        for method in ("diffprivlib", "non-private"):
            cells = [
                f"{method} LogisticRegression (baseline)",
                "pure" if method != "non-private" else "none",
            ]
            for dataset in names:
                p = _largest(group[0], dataset, method)
                cells.append(f"{p.median:.3f}" if p else "-")
            lines.append("| " + " | ".join(cells) + " |")
        worse = [
            f"* {md_code(c.learner)} on {_u(dataset)}: {_u(text)}"
            for c in group
            for dataset in names
            if (text := against_diffprivlib(c, dataset)).startswith("worse")
        ]
        if worse:
            lines += ["", "Where a learner's defaults are worse than diffprivlib:", "", *worse]
    notes = sorted({n for c in all_curves for n in c.notes if n.startswith("diffprivlib")})
    if notes:
        lines += ["", *[f"Note: {_u(n)}" for n in notes]]
    return "\n".join(lines) + "\n"
