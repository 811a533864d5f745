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


__all__ = ["curve_plot", "learner_page", "verdict", "write_pages"]

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
    """Two rows (datasets) of two panels: error against n, error against epsilon; a point
    is the mean over the seeds, its bar the 95% t-interval; the dotted grey line is the
    error of always answering the majority class."""
    from matplotlib.figure import Figure  # outside pyplot: no backend is switched

    rows = len(curves.datasets)
    fig = Figure(figsize=(11, 3.6 * rows))
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
                ax.errorbar(
                    xs,
                    [p.mean for p in pts],
                    yerr=[0.0 if math.isnan(p.half_width) else p.half_width for p in pts],
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
        _plot_text(f"{curves.learner} ({curves.privacy}; {curves.seeds} seeds, 95% t-intervals)")
    )
    fig.tight_layout(rect=(0, 0.07 if rows > 1 else 0.12, 1, 0.97))
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


def verdict(curves: CurveSet, dataset: str, regime: str | None = None) -> str:
    """One honest phrase on the learner's error at the largest n (defaults, or the labelled
    ``regime``) against the majority-class error: ``learns``, ``weak``, ``near chance`` or
    ``worse than the majority class``."""
    p = _largest(curves, dataset, curves.learner, regime)
    chance = curves.chance.get(dataset)
    if p is None or chance is None:
        return "no point fitted"
    if p.mean > chance + 0.05:
        return "worse than the majority class"
    if p.mean >= chance - 0.05:
        return "near chance"
    if p.mean <= chance / 2:
        return "learns"
    return "weak"


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"


def learner_page(curves: CurveSet, command: str, image: str) -> str:
    """The Markdown page of one learner."""
    lines = [
        f"# Learning curves: {md_code(curves.learner)}",
        "",
        f"{_u(curves.source)}. Task: {_u(curves.task)}; privacy: {_u(curves.privacy)}.",
        "",
        f"Generated by {md_code(command)} (base seed {curves.seed}, {curves.seeds} seeds, delta = "
        f"{curves.delta:g} for the approximate learners). Each point is the mean test error "
        "over the seeds; its interval the 95% Student-t interval of the mean over the seeds "
        "(the spread of the runs, not a bound). The learner runs at its defaults (and at the "
        "labelled regimes its class offers), with the dataset's public row-norm bound as "
        "`feature_norm` and `fit_intercept` as the data need, where it takes them; the "
        "accounted epsilon is the largest the accountant certified for the fitted runs (an "
        "upper bound, never above the epsilon asked). Baselines: scikit-learn's non-private "
        "LogisticRegression (a floor) and diffprivlib's epsilon-DP LogisticRegression at the "
        "same epsilon.",
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
        lines.append(
            f"* {_u(dataset)}: at n = {p.n} and epsilon = {curves.fixed_epsilon:g} the test error "
            f"is {p.mean:.3f} (+- {_fmt(p.half_width)}), against {_fmt(chance)} for the "
            f"majority class and {_fmt(base.mean if base else None)} for non-private "
            f"logistic regression: **{verdict(curves, dataset)}**."
        )
        for regime in _regimes(curves):
            q = _largest(curves, dataset, curves.learner, regime)
            if q is not None:
                lines.append(
                    f"  * labelled regime *{_u(regime)}*: {q.mean:.3f} (+- {_fmt(q.half_width)}) "
                    f"at n = {q.n}: **{verdict(curves, dataset, regime)}**."
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
                "| method | regime | n | epsilon | mean error | 95% interval | seeds | "
                "accounted epsilon |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            ]
            for (method, regime), pts in curves.select(dataset=dataset, axis=axis).items():
                if method == "non-private" and axis == "epsilon":
                    pts = pts[:1]  # the same fit at every epsilon
                for p in pts:
                    eps = "-" if method == "non-private" else f"{p.epsilon:g}"
                    if p.refused is not None:
                        lines.append(
                            f"| {_u(method)} | {_u(regime)} | {p.n} | {eps} | refused: "
                            f"{_u(p.refused)} | | | |"
                        )
                        continue
                    lo = p.mean - p.half_width
                    hi = p.mean + p.half_width
                    interval = "-" if math.isnan(p.half_width) else f"[{lo:.3f}, {hi:.3f}]"
                    lines.append(
                        f"| {_u(method)} | {_u(regime)} | {p.n} | {eps} | {p.mean:.3f} | "
                        f"{interval} | {len(p.errors)} | {_fmt(p.accounted_epsilon, 4)} |"
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
        "and against epsilon (at a fixed n), on synthetic data of its task and on "
        "scikit-learn's breast-cancer data, with error bars over seeds, beside non-private "
        "logistic regression and diffprivlib's LogisticRegression; notes state the source "
        "document's own sample-complexity numbers where a learner cannot learn at practical "
        "n. The verdict compares the error at the largest n with the majority-class error "
        "(near chance: within 0.05 of it; learns: at most half of it; weak: between; worse "
        "than the majority class: more than 0.05 above it). A row in italics is a learner's "
        "labelled practical regime (`CURVE_REGIMES`: other parameters whose privacy proof "
        "still holds, accounted like the defaults; see docs/learners.md).",
        "",
        "| learner | task | privacy | synthetic: error at largest n | non-private | verdict | "
        "breast-cancer: error at largest n | non-private | verdict |",
        "| --- | --- | --- | ---: | ---: | --- | ---: | ---: | --- |",
    ]
    for c in all_curves:
        for regime in [None, *_regimes(c)]:
            name = f"[{_u(c.learner)}]({_href(c.learner + '.md')})"
            cells = [name if regime is None else f"{name} *{_u(regime)}*", _u(c.task)]
            cells.append(_u(c.privacy))
            for dataset, _ in c.datasets[:2]:
                p = _largest(c, dataset, c.learner, regime)
                base = _largest(c, dataset, "non-private")
                cells += [
                    f"{p.mean:.3f} (n = {p.n})" if p else "-",
                    _fmt(base.mean if base else None),
                    verdict(c, dataset, regime),
                ]
            lines.append("| " + " | ".join(cells) + " |")
    notes = sorted({n for c in all_curves for n in c.notes if n.startswith("diffprivlib")})
    if notes:
        lines += ["", *[f"Note: {_u(n)}" for n in notes]]
    return "\n".join(lines) + "\n"
