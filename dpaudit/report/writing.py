"""Writing reports and the fast check that the written reports are up to date: what
:func:`dpaudit.report.generate` and :func:`dpaudit.report.check_up_to_date` do (kept apart
from the package's ``__init__`` so that ``dpaudit report --list`` and its argument errors
import none of the report machinery)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpaudit.report.contents import FORMAT_VERSION, collect, describe, target_curve
from dpaudit.report.numbers import for_people
from dpaudit.report.plots import growth_plot, one_run_plot, privacy_curve_plot
from dpaudit.report.progress import ReportProgress
from dpaudit.report.render import index_blocks, png_data_uri, report_blocks, to_html, to_markdown
from dpaudit.report.settings import REGENERATE_COMMAND
from dpaudit.report.target import TARGETS, Target

__all__ = ["DESCRIBED_KEYS", "MANIFEST", "check_up_to_date", "generate"]

#: Keys of a stored report that :func:`describe` recomputes cheaply.
DESCRIBED_KEYS = ("target", "claim", "plan", "guarantee", "fingerprint")
MANIFEST = "manifest.json"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _json_ready(data: Any) -> Any:
    """``data`` with every NaN or infinite float, however deeply nested, as its text ("inf",
    "-inf", "nan"): the results' own ``to_dict`` do this for their top-level fields, and a
    report must stay strict JSON whatever a nested value (a growth point, a diagnostic) is."""
    if isinstance(data, float) and not math.isfinite(data):
        return str(data)
    if isinstance(data, dict):
        return {k: _json_ready(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_json_ready(v) for v in data]
    return data


def _dump(data: Any) -> str:
    return (
        json.dumps(_json_ready(data), indent=2, sort_keys=True, allow_nan=False, default=str) + "\n"
    )


def generate(
    targets: Sequence[Target],
    out: str | Path,
    *,
    fmt: str = "md",
    seed: int = 0,
    audit: bool = True,
    progress: bool | None = None,
    command: str | None = None,
) -> list[dict[str, Any]]:
    """Collect and write the reports of ``targets`` into ``out``.

    Writes ``<slug>.md`` (or ``.html``) and ``<slug>.json`` per target, the plots in
    ``plots/``, the index page ``index.md`` (or ``.html``) and ``manifest.json`` (the
    fingerprint of each report's inputs and the hash of every file written).

    Args:
        targets: the targets (:func:`resolve_targets`).
        out: the output directory (created if needed).
        fmt: ``"md"`` or ``"html"``.
        seed: the run's seed; each audit's seed derives from it and the target's name.
        audit: run the audits (False: accountant and verifier only).
        progress: show progress with an estimate of the time left on stderr (True: a bar on
            a terminal, a line per target elsewhere; None: a bar on a terminal only; False:
            none; :class:`dpaudit.report.progress.ReportProgress`).
        command: the command to print as "regenerate with" (default: the ``dpaudit report``
            command equivalent to this call).

    Returns:
        The collected reports (dicts, as stored in the JSON files).

    Raises:
        ValueError: for an unknown format or no targets.
    """
    if fmt not in ("md", "html"):
        raise ValueError(f"format must be 'md' or 'html', got {fmt!r}")
    if not targets:
        raise ValueError("no targets to report on")
    out = Path(out)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    command = command or (
        f"dpaudit report {' '.join(t.regenerate or t.name for t in targets)} --out {out} "
        f"--seed {seed}" + (" --format html" if fmt == "html" else "")
    )
    reports: list[dict[str, Any]] = []
    files: dict[str, dict[str, Any]] = {}
    bar = ReportProgress(targets, progress, audit=audit)
    try:
        for target in targets:
            bar.begin(target)
            report = collect(target, seed, audit=audit, step=bar.step)
            bar.step("plots")
            images: dict[str, str] = {}
            written: list[Path] = []
            curve = out / "plots" / f"{target.slug}-curve.png"
            # HTML pages embed their plots (a standalone file); Markdown links them
            if privacy_curve_plot(report, curve):
                images["curve"] = png_data_uri(curve) if fmt == "html" else f"plots/{curve.name}"
                written.append(curve)
            growth = out / "plots" / f"{target.slug}-growth.png"
            if growth_plot(report, growth):
                images["growth"] = png_data_uri(growth) if fmt == "html" else f"plots/{growth.name}"
                written.append(growth)
            one_run = out / "plots" / f"{target.slug}-one-run.png"
            if one_run_plot(report, one_run):  # only for a one-run audit
                images["one_run"] = (
                    png_data_uri(one_run) if fmt == "html" else f"plots/{one_run.name}"
                )
                written.append(one_run)
            blocks = report_blocks(report, images)
            page = out / f"{target.slug}.{fmt}"
            page.write_text(
                to_markdown(blocks) if fmt == "md" else to_html(blocks, target.title),
                encoding="utf-8",
            )
            data = out / f"{target.slug}.json"
            data.write_text(_dump(report), encoding="utf-8")
            written += [page, data]
            files[target.name] = {
                "fingerprint": report["fingerprint"],
                "files": {p.relative_to(out).as_posix(): _sha(p) for p in sorted(written)},
            }
            reports.append(report)
            bar.end(target)
    finally:
        bar.close()
    # merge with the reports already in ``out`` for the same seed and format, so that
    # regenerating a few targets refreshes them in place and keeps the index whole
    everything, merged = _merge(out, seed, fmt, reports, files)
    if merged is not None:
        command = merged
    links = {
        r["target"]["name"]: f"{r['target']['name'].replace('/', '--')}.{fmt}" for r in everything
    }
    blocks = index_blocks(everything, links, seed, command)
    index = out / f"index.{fmt}"
    index.write_text(
        to_markdown(blocks) if fmt == "md" else to_html(blocks, "dpaudit reports"), encoding="utf-8"
    )
    manifest = {
        "format": FORMAT_VERSION,
        "seed": seed,
        "command": command,
        "report_format": fmt,
        "index": {index.name: _sha(index)},
        "targets": {r["target"]["name"]: files[r["target"]["name"]] for r in everything},
    }
    (out / MANIFEST).write_text(_dump(manifest), encoding="utf-8")
    return reports


def _merge(
    out: Path, seed: int, fmt: str, reports: list[dict[str, Any]], files: dict[str, dict[str, Any]]
) -> tuple[list[dict[str, Any]], str | None]:
    """The reports of this run merged with those of an earlier run in ``out`` (same seed,
    format and report format; files still present), earlier order kept.  Updates ``files``.

    Returns:
        (all reports, the earlier run's command or None when nothing was merged).
    """
    path = out / MANIFEST
    if not path.exists():
        return reports, None
    old = json.loads(path.read_text(encoding="utf-8"))
    if (old.get("format"), old.get("seed"), old.get("report_format")) != (
        FORMAT_VERSION,
        seed,
        fmt,
    ):
        return reports, None
    fresh = {r["target"]["name"]: r for r in reports}
    merged: list[dict[str, Any]] = []
    for name, entry in old.get("targets", {}).items():
        if name in fresh:
            merged.append(fresh.pop(name))
            continue
        data = out / f"{name.replace('/', '--')}.json"
        if data.exists() and all((out / rel).exists() for rel in entry["files"]):
            merged.append(json.loads(data.read_text(encoding="utf-8")))
            files[name] = entry
    merged += list(fresh.values())
    return merged, old.get("command")


def check_up_to_date(
    out: str | Path, targets: Sequence[Target] | None = None, *, curves: bool = False
) -> list[str]:
    """The fast check that the reports in ``out`` match their inputs (seconds, no audit).

    For every target: its report exists and no written file was edited (hashes in the
    manifest); the cheap part of the report (claim, plan, accountant guarantee with its
    derivation, and the fingerprint of the audit's and verifier's inputs -- the code audited,
    the seed, the samples) recomputes to what is stored.  With ``curves``, the accountant's
    privacy curve too (13 accountant calls per plan, about half a minute for the committed
    reports: what an accountant or PLD change moves).  What it cannot see without running
    the audits is a change of the auditor's or verifier's own code; the full regeneration
    (a slow test) covers that.

    Args:
        out: the reports directory.
        targets: the targets that must be reported (default: every registered target).
        curves: also recompute each report's privacy curve and compare it with the stored
            one (rounded as the report rounds it).

    Returns:
        One line per problem (empty when up to date).
    """
    out = Path(out)
    path = out / MANIFEST
    if not path.exists():
        return [f"{path} is missing: regenerate with `{REGENERATE_COMMAND}`"]
    manifest = json.loads(path.read_text(encoding="utf-8"))
    seed = int(manifest["seed"])
    problems: list[str] = []
    if manifest.get("format") != FORMAT_VERSION:
        problems.append(f"report format {manifest.get('format')} != {FORMAT_VERSION}")
    for name, digest in manifest.get("index", {}).items():
        if not (out / name).exists() or _sha(out / name) != digest:
            problems.append(f"{name} was edited or is missing")
    stored = manifest["targets"]
    wanted = list(targets) if targets is not None else list(TARGETS.values())
    # a subset checked (``dpaudit report --check DIR TARGET``) leaves the others' reports be
    names = {t.name for t in wanted} | set(TARGETS)
    problems += [f"{n}: reported but no longer a target" for n in stored if n not in names]
    for target in wanted:
        entry = stored.get(target.name)
        if entry is None:
            problems.append(f"{target.name}: no report")
            continue
        for rel, digest in entry["files"].items():
            if not (out / rel).exists():
                problems.append(f"{target.name}: {rel} is missing")
            elif (out / rel).stat().st_size == 0:
                # no report file is empty: a regeneration cut off while writing leaves one
                problems.append(f"{target.name}: {rel} is empty")
            elif _sha(out / rel) != digest:
                problems.append(f"{target.name}: {rel} was edited after generation")
        data_path = out / f"{target.slug}.json"
        if not data_path.exists():
            continue
        saved = json.loads(data_path.read_text(encoding="utf-8"))
        now = json.loads(_dump(describe(target, seed)))
        for key in DESCRIBED_KEYS:
            if saved.get(key) != now.get(key):
                what = (
                    "its inputs changed (code audited, plan, claim, seed or samples)"
                    if key == "fingerprint"
                    else f"its {key} changed"
                )
                problems.append(f"{target.name}: {what}")
        if curves and "curve" in saved:
            curve = json.loads(_dump(for_people({"curve": target_curve(target, now["guarantee"])})))
            if saved["curve"] != curve["curve"]:
                problems.append(f"{target.name}: its privacy curve changed")
    return problems
