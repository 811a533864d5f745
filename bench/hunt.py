"""The real-library panel: functions of seven DP libraries audited with no designed pair.

Each row audits one library function with :func:`dpaudit.audit.audit_records` and nothing but
the adapter's record domain, its neighbouring relation and dataset sizes, and the library's own
claim (``mechanisms/libraries/*_adapters.py``; each adapter's docstring cites where the claim
comes from).  No pair is designed, no value is smuggled in: what is found, the search found.

The libraries cannot share one environment (``noxfile.py``), so the panel runs in parts, each in
its environment, and the parts' rows are combined into one table::

    .nox-tool/bin/nox -s hunt                    # every part, then bench/hunt.md
    python bench/hunt.py --part main             # one part in the current environment
    python bench/hunt.py --part main --json rows.json
    python bench/hunt.py --combine a.json b.json --out bench/hunt.md
    python bench/hunt.py --combine bench/hunt-runs/*.json --notes bench/hunt-notes.md \
        --out bench/hunt.md   # the committed page: rows of several runs, oldest first
    python bench/hunt.py --part main --only pipeline-dp-sum --samples 1000

Columns: the target (what the row is expected to show: "correct" for a function with no known
bug, else the kind of finding and the auditor feature it needs), whether the audit flagged it
and on which pair, the certified lower bound on epsilon (95%) against the claim, whether a
correct function was flagged (a false alarm, none allowed), the samples the search drew against
those of the final audit, and seconds.  A feature the auditor does not have yet (issue #32:
edge values, errors as outputs, dataset-dependent claims, structured and float32 outputs) is
detected at run time; a row whose target needs a missing one says so.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib
import importlib.metadata
import inspect
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the checkout's code first
    sys.path.insert(0, str(ROOT))

from dpaudit.audit import audit_records  # noqa: E402

#: The panel's seed and confidence.
SEED = 2024
CONFIDENCE = 0.95
#: Samples of a row whose target needs a feature the auditor lacks: the row then audits the
#: function on what the search does try, and more samples would not reach the target.
WITHOUT_FEATURE_SAMPLES = 2_000
#: Distributions whose versions each part records.
VERSIONS = (
    "numpy",
    "scikit-learn",
    "pandas",
    "diffprivlib",
    "opendp",
    "python-dp",
    "pipeline-dp",
    "torch",
    "opacus",
    "smartnoise-sql",
    "tmlt.core",
)

#: Auditor features of issue #32 that rows may need, with the helper branch that builds them.
FEATURES = {
    "edge values": "NaN, infinities and other edge values tried as records (hunt-search)",
    "errors as outputs": "audit_records(on_error='output'): an exception is an outcome "
    "(hunt-search, hunt-outputs)",
    "refused candidates": "a candidate on which the function raises is skipped and listed "
    "(hunt-search)",
    "dataset-dependent claims": "epsilon given as a function of the dataset (hunt-search)",
    "structured outputs": "dicts, None and variable-length outputs (hunt-outputs)",
    "float32 outputs": "bit-pattern events for float32 outputs and torch tensors (hunt-outputs)",
}


@dataclasses.dataclass(frozen=True)
class Entry:
    """One row of the panel.

    Attributes:
        module: the adapters' module (``mechanisms.libraries.pydp_adapters``).
        adapter: the adapter's name in it.
        samples: samples per dataset of the final audit.
        target: ``"correct"`` (no known bug: a flag is a false alarm) or the finding expected.
        needs: the auditor features (keys of :data:`FEATURES`) the row needs to be audited as
            intended; a missing one is named in the row.
        options: extra keyword arguments of ``audit_records`` (passed when it has them).
        budget_seconds: the search's time budget (None: the default search), for slow
            libraries.
    """

    module: str
    adapter: str
    samples: int
    target: str = "correct"
    needs: tuple[str, ...] = ()
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    budget_seconds: float | None = None


_DPL, _ODP = "mechanisms.libraries.diffprivlib_adapters", "mechanisms.libraries.opendp_adapters"
_PYDP, _PDP = "mechanisms.libraries.pydp_adapters", "mechanisms.libraries.pipeline_dp_adapters"
_OPACUS = "mechanisms.libraries.opacus_adapters"
_SN, _TMLT = "mechanisms.libraries.smartnoise_adapters", "mechanisms.libraries.tmlt_adapters"
_NAN = "NaN through a clamp"
_ERR = "an exception on the empty dataset"

#: The panel, by part (the environment it runs in: noxfile.py).  Samples: the search draws
#: at most twice the final audit's, so a row's samples also bound how many candidate pairs the
#: search reaches; when the edge records came after the ordinary block, the NaN rows needed
#: about 10,000 for the search to reach them (at 2,000 it scored 16 candidates, none with
#: NaN).  NaN is now the second candidate (dpaudit.audit.record_pairs.EARLY_EDGES), which a
#: slow row under its time budget reaches too; the samples are kept as they were measured.
PARTS: dict[str, list[Entry]] = {
    "main": [
        Entry(
            _DPL,
            "diffprivlib_laplace_sum",
            4_000,
            "NaN through the caller's clamp (and float rounding, known: bits)",
            ("edge values",),
        ),
        Entry(
            _DPL,
            "diffprivlib_mean",
            8_000,
            "NaN through a clamp (and float rounding)",
            ("edge values",),
        ),
        Entry(_DPL, "diffprivlib_geometric_count", 4_000),
        Entry(_DPL, "diffprivlib_histogram", 2_000),
        Entry(
            _DPL,
            "diffprivlib_gaussian_nb",
            600,
            "class presence released exactly",
            budget_seconds=60.0,
        ),
        Entry(_ODP, "opendp_integer_laplace_sum", 4_000),
        Entry(_ODP, "opendp_float_laplace_sum", 4_000),
        Entry(_PYDP, "pydp_bounded_sum", 4_000, needs=("edge values",)),
        Entry(_PYDP, "pydp_bounded_mean", 4_000, needs=("edge values",)),
        Entry(_PYDP, "pydp_count", 4_000),
        Entry(  # ApproxBounds takes 30-300 ms a call on 32-48 records (300 under load)
            _PYDP,
            "pydp_auto_bounds_sum",
            200,
            needs=("errors as outputs",),
            options={"on_error": "output"},
        ),
        Entry(_PYDP, "pydp_partition_selection", 4_000),
        Entry(_PDP, "pipeline_dp_sum", 10_000, _NAN, ("edge values",)),
        Entry(_PDP, "pipeline_dp_mean", 10_000, _NAN, ("edge values",)),
        Entry(_PDP, "pipeline_dp_variance", 10_000, _NAN, ("edge values",)),
        Entry(
            _PDP,
            "pipeline_dp_count",
            2_000,
            _ERR,
            ("errors as outputs",),
            options={"on_error": "output"},
        ),
        Entry(
            _PDP,
            "pipeline_dp_count_by_partition",
            1_000,
            needs=("structured outputs",),
        ),
        Entry(
            _OPACUS,
            "opacus_dp_sgd",
            1_000,
            "dataset size leaks through the step count and the normalisation",
            ("dataset-dependent claims", "float32 outputs"),
            budget_seconds=240.0,
        ),
        Entry(
            _OPACUS,
            "opacus_dp_sgd_full_batch",
            2_000,
            "float32 noise rounding (secure_mode off)",
            ("float32 outputs",),
            budget_seconds=240.0,
        ),
    ],
    "smartnoise": [
        Entry(
            _SN,
            "smartnoise_count_by_key",
            400,
            needs=("structured outputs",),
            budget_seconds=120.0,
        ),
        Entry(
            _SN,
            "smartnoise_count_by_key_uncensored",
            400,
            "released key set (censor_dims off)",
            ("structured outputs",),
            budget_seconds=120.0,
        ),
        Entry(_SN, "smartnoise_sum", 1_000, needs=("edge values",), budget_seconds=150.0),
    ],
    "tmlt": [
        Entry(_TMLT, "tmlt_geometric_count", 4_000),
        Entry(_TMLT, "tmlt_laplace_sum", 4_000, needs=("edge values",)),
        Entry(_TMLT, "tmlt_noisy_median", 4_000, needs=("edge values",)),
    ],
}


#: Each row's target as the panel now describes it (a row of an older run keeps its numbers;
#: whether it is a false alarm was decided by the target "correct", which these keep).
TARGETS = {e.adapter: e.target for p in PARTS.values() for e in p}

#: Whether each finding is known upstream (searched in the library's issue tracker).
UPSTREAM = {
    "diffprivlib_laplace_sum": "NaN: the adapter's own np.clip (the caller's code) passes it "
    "and diffprivlib's Laplace.randomise returns NaN for it (as issue 80 for tools.mean); "
    "float rounding (found with edge values off, reports/): see docs/floating-point.md "
    "(Mironov 2012; diffprivlib's four-uniform sampler does not remove it)",
    "diffprivlib_mean": "known: IBM/differential-privacy-library issue 80, 'Handling of NaNs' "
    "(open)",
    "diffprivlib_gaussian_nb": "found by dpaudit (docs/libraries.md)",
    "pipeline_dp_sum": "new: no issue about NaN in OpenMined/PipelineDP's tracker",
    "pipeline_dp_mean": "new (as SUM)",
    "pipeline_dp_variance": "new (as SUM)",
    "pipeline_dp_count": "new: no issue about the empty collection's exception",
    "opacus_dp_sgd": "known: meta-pytorch/opacus issue 571, 'Privacy Leakage at low sample "
    "size' (open), and issue 819 (normalisation by the expected batch size, "
    "int(len(dataset) * sample_rate): the pair found, 7 against 8 records, differs only there)",
    "opacus_dp_sgd_full_batch": "documented: Opacus's DPOptimizer says only secure_mode "
    "(off by default) makes the noise resist floating-point attacks; its report "
    "(reports/hunt/opacus) found NaN through the per-sample clipping first (no upstream issue "
    "found); its report with edge_values=False, the float32 rounding (3.44 vs 0.795)",
    "smartnoise_count_by_key_uncensored": "documented: PrivateReaderOptions says to turn "
    "censor_dims off only when small dimensions cannot expose privacy",
}


def available_features() -> set[str]:
    """The features of :data:`FEATURES` that this checkout's auditor has (read off
    ``audit_records``'s signature; a dataset-dependent claim is tried on a constant function)."""
    params = inspect.signature(audit_records).parameters
    have = set()
    if "edge_values" in params:
        have.add("edge values")
    if "on_error" in params:
        have |= {"errors as outputs", "refused candidates"}
    try:
        audit_records(
            lambda data, rng: 0.0,
            [(0.0, 1.0)],
            epsilon=lambda data: 1.0,
            sizes=(1, 1),
            samples=10,
            seed=0,
        )
        have.add("dataset-dependent claims")
    except (TypeError, ValueError):
        pass
    # structured and float32 outputs: the auditor names them in its probe's schema when it
    # reads them (dpaudit.audit.outputs); an older auditor refuses a dict outright
    try:
        audit_records(
            lambda data, rng: {0: float(rng.random())},
            [(0.0, 1.0)],
            epsilon=1.0,
            sizes=(1, 1),
            samples=10,
            seed=0,
        )
        have.add("structured outputs")
    except (TypeError, ValueError):
        pass
    # float32 bit-pattern events: the bits family names the precisions it reads
    bits = importlib.import_module("dpaudit.audit.float_bits")
    if "float32" in inspect.getsource(bits):
        have.add("float32 outputs")
    return have


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return ""


def environment() -> dict[str, Any]:
    """What the part ran on: versions, machine, load, the checkout's commit."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "commit": commit,
        "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": {d: v for d in VERSIONS if (v := _version(d))},
    }


def _claim_text(epsilon: Any, delta: float) -> str:
    eps = "f(dataset)" if callable(epsilon) else f"{epsilon:.4g}"
    return f"({eps}, {delta:.2g})" if delta else eps


def _constant_claim(adapter: Any) -> float:
    """The largest claim over the dataset sizes searched (a dataset-dependent claim given as one
    number to an auditor that takes only numbers: valid for every pair, weaker for some)."""
    width = len(adapter.domain)
    lo, hi = adapter.sizes
    return max(adapter.epsilon(np.zeros((n, width))) for n in range(max(lo, 1), hi + 1))


def run_entry(
    entry: Entry,
    features: set[str],
    *,
    samples: int | None = None,
    seed: int = SEED,
    adapter: Any = None,
) -> dict[str, Any]:
    """Audit one row; returns its cells (a JSON-ready dict).  ``adapter`` overrides the one
    named by ``entry`` (tests)."""
    from mechanisms.libraries import LibraryUnavailableError

    row: dict[str, Any] = {"adapter": entry.adapter, "target": entry.target}
    missing = [f for f in entry.needs if f not in features]
    row["missing"] = missing
    row["needs"] = list(entry.needs)
    try:
        if adapter is None:
            adapter = getattr(importlib.import_module(entry.module), entry.adapter)
        row.update(library=adapter.library, api=adapter.api, name=adapter.name)
        row["version"] = _version(adapter.library)
        epsilon: Any = adapter.epsilon
        if callable(epsilon) and "dataset-dependent claims" not in features:
            epsilon = _constant_claim(adapter)
            row["claim_note"] = "the largest claim over the sizes searched"
        row["claim"] = _claim_text(epsilon, adapter.delta)
        options = {k: v for k, v in entry.options.items() if _accepted(k)}
        if samples is None and missing:
            samples = min(entry.samples, WITHOUT_FEATURE_SAMPLES)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = audit_records(
                adapter,
                adapter.domain,
                epsilon=epsilon,
                delta=adapter.delta,
                relation=adapter.relation,
                sizes=adapter.sizes,
                samples=samples or entry.samples,
                confidence=CONFIDENCE,
                seed=seed,
                budget_seconds=entry.budget_seconds,
                **options,
            )
        row["seconds"] = time.perf_counter() - start
    except LibraryUnavailableError as err:
        row.update(status="not installed", error=str(err))
        return row
    except Exception as err:  # the auditor refused the function: the row says why
        row.update(status="error", error=f"{type(err).__name__}: {err}")
        row.setdefault("seconds", time.perf_counter() - start if "start" in locals() else 0.0)
        return row
    final = 2 * (samples or entry.samples)
    claimed = result.epsilon_claimed
    search = getattr(result, "search_samples", None)
    row.update(
        status="ran",
        violation=bool(result.violation),
        epsilon_lower=float(result.epsilon_lower),
        epsilon_claimed=float(claimed),
        pair=result.pair_description,
        event=result.event,
        reproducible=bool(result.reproducible),
        final_samples=final,
        search_samples=int(search if search is not None else result.samples_drawn - final),
        candidates=int(result.candidates_searched),
        refused=int(getattr(result, "refused_count", len(getattr(result, "refused", ())))),
        edge_values=[str(e) for e in getattr(result, "pair_edge_values", ())],
        claim_read=str(getattr(result, "claim_description", "")),
        false_alarm=bool(result.violation) and entry.target == "correct",
    )
    return row


def _accepted(option: str) -> bool:
    return option in inspect.signature(audit_records).parameters


def run_part(
    part: str, only: Sequence[str] = (), samples: int | None = None
) -> list[dict[str, Any]]:
    """Audit every row of ``part`` (or those named in ``only``), printing progress on stderr."""
    features = available_features()
    rows = []
    for entry in PARTS[part]:
        if only and entry.adapter not in only and entry.adapter.replace("_", "-") not in only:
            continue
        print(f"[hunt] {part}: {entry.adapter} ...", file=sys.stderr, flush=True)
        row = run_entry(entry, features, samples=samples)
        row["part"] = part
        print(f"[hunt]   {_verdict(row)} ({row.get('seconds', 0):.1f} s)", file=sys.stderr)
        rows.append(row)
    return rows


def _verdict(row: dict[str, Any]) -> str:
    if row.get("status") != "ran":
        return f"{row.get('status')}: {row.get('error', '')[:200]}"
    flag = "FLAGGED" if row["violation"] else "not flagged"
    return f"{flag}, eps >= {row['epsilon_lower']:.3f} vs {row['epsilon_claimed']:.4g}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The panel's rows as a Markdown table."""
    head = (
        "| library | function | claim | target | violation found (pair) | eps_lower vs claim "
        "| false alarm | search / final samples | seconds | run |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        lib = f"{r.get('library', '?')} {r.get('version', '')}".strip()
        target = TARGETS.get(r["adapter"], r["target"])  # the panel's current description
        if r.get("missing"):
            target += f" (needs {', '.join(r['missing'])}: not on main yet)"
        claim = r.get("claim", "")
        if r.get("claim_note"):
            claim += f" ({r['claim_note']})"
        if r.get("status") != "ran":
            what = f"{r.get('status')}: {_short(r.get('error', ''), 160)}"
            cells = [lib, r.get("name", r["adapter"]), claim, target, what, "", "", "", "", ""]
            cells[8] = f"{r.get('seconds', 0):.1f}" if r.get("seconds") else ""
            cells[9] = r.get("run", "")
        else:
            found = (f"**yes**: {_short(r['pair'], 220)}" if r["violation"] else "no") + (
                "" if r["reproducible"] else " (not seedable)"
            )
            if r["violation"] and r.get("edge_values") and "edge values" not in r["pair"]:
                found += f"; edge values: {_short('; '.join(r['edge_values']), 120)}"
            if r.get("refused"):
                found += f"; {r['refused']} candidate(s) refused (the function raised)"
            ratio = r["search_samples"] / r["final_samples"]
            cells = [
                lib,
                r.get("name", r["adapter"]),
                claim,
                target,
                found,
                f"{r['epsilon_lower']:.3f} vs {r['epsilon_claimed']:.4g}",
                "**FALSE ALARM**" if r["false_alarm"] else "none",
                f"{r['search_samples']:,} / {r['final_samples']:,} ({ratio:.1f}x)",
                f"{r['seconds']:.1f}",
                r.get("run", ""),
            ]
        lines.append("| " + " | ".join(_cell(str(c)) for c in cells) + " |")
    return head + "\n".join(lines) + "\n"


def markdown(parts: dict[str, dict[str, Any]], command: str, notes: str = "") -> str:
    """The whole results page: when, where, versions, the table, and the features each
    target needs.  ``parts`` maps a part's name to ``{"environment": ..., "rows": ...,
    "features": ...}``."""
    order = {e.adapter: k for k, e in enumerate(e for p in PARTS.values() for e in p)}
    rows = sorted(  # the panel's order, whichever run measured a row
        (r for p in parts.values() for r in p["rows"]),
        key=lambda r: order.get(r["adapter"], len(order)),
    )
    today = datetime.date.today().isoformat()
    out = [
        "# The real-library panel: DP libraries audited with no designed pair",
        "",
        f"Generated on {today} by `{command}` (bench/hunt.py; environments in noxfile.py). "
        f"Every row: `audit_records` with the adapter's record domain, relation, dataset sizes "
        f"and the library's own claim, confidence {CONFIDENCE}, seed {SEED}; nothing else.",
        "",
    ]
    for name, part in parts.items():
        env = part["environment"]
        versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items())
        have = ", ".join(sorted(part["features"])) or "none of issue #32's"
        label = part.get("label", "")
        started = f", started {env['started']}" if env.get("started") else ""
        out.append(
            f"- {f'run {label}, ' if label else ''}part `{part.get('part', name)}`: Python "
            f"{env['python']} on {env['machine']} (load at start {env['load']}{started}), "
            f"dpaudit at {env['commit'] or '?'}; {versions}. Auditor features present: {have}."
        )
    flagged = [r for r in rows if r.get("status") == "ran" and r["violation"]]
    alarms = [r for r in rows if r.get("false_alarm")]
    ran = [r for r in rows if r.get("status") == "ran"]
    search = sum(r["search_samples"] for r in ran)
    final = sum(r["final_samples"] for r in ran)
    ratios = [r["search_samples"] / r["final_samples"] for r in ran]
    out += [
        "",
        f"{len(rows)} functions, {len(ran)} audited, {len(flagged)} flagged, "
        f"{len(alarms)} false alarms; the search drew {search:,} samples against the final "
        f"audits' {final:,} ({search / max(final, 1):.1f}x"
        + (f"; per row at most {max(ratios):.2f}x" if ratios else "")
        + ").",
        "",
        *([notes.strip(), ""] if notes.strip() else []),
        table(rows),
        "## Findings known upstream or new",
        "",
        *[
            f"- {name}: {text}."
            for name, text in UPSTREAM.items()
            if any(r["adapter"] == name for r in rows)
        ],
        "",
        "## Targets and the auditor features they need",
        "",
    ]
    present = set.intersection(*(set(p["features"]) for p in parts.values())) if parts else set()
    needs = {e.adapter: e.needs for p in PARTS.values() for e in p}  # as the panel now says
    for feature, what in FEATURES.items():
        users = [r.get("name", r["adapter"]) for r in rows if feature in r.get("missing", ())]
        needing = [
            r.get("name", r["adapter"])
            for r in rows
            if feature in needs.get(r["adapter"], r.get("needs", ()))
        ]
        state = (
            "present in every part"
            + (f"; the rows that need it: {', '.join(needing)}" if needing else "")
            if feature in present
            else f"missing, needed by {', '.join(users)}"
            if users
            else "missing, needed by no row of this run"
        )
        out.append(f"- {feature}: {what}. Here: {state}.")
    return "\n".join(out) + "\n"


#: The libraries whose reproductions each part writes (reports/hunt/LIBRARY/).
REPORTS = {"main": ("pipeline-dp", "opacus"), "smartnoise": ("smartnoise-sql",), "tmlt": ()}


def write_reports(part: str, only: Sequence[str] = ()) -> None:
    """Regenerate the reproductions of ``part``'s findings in ``reports/hunt/LIBRARY/``
    (mechanisms/libraries/hunt_targets.py), at the seed of reports/; ``only``: these
    libraries of the part."""
    from dpaudit.report import REPORTS_SEED, generate
    from mechanisms.libraries.hunt_targets import LIBRARIES

    for library in REPORTS[part]:
        if only and library not in only:
            continue
        targets, _ = LIBRARIES[library]
        out = ROOT / "reports" / "hunt" / library
        print(f"[hunt] reports of {library} -> {out}", file=sys.stderr, flush=True)
        generate(
            targets(),
            out,
            seed=REPORTS_SEED,
            progress=False,
            command=f"nox -s hunt_{part} -- --reports",
        )


def combine(runs: Sequence[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Parts' runs (each as ``--part ... --json`` writes it, oldest first) as one page's parts.

    With one run per part, the parts as they are.  With more (rows rerun with ``--only``), a
    function measured in several runs keeps its latest row; each run is labelled (A, B, ...)
    and each row names its run, so the page says which rows come from which run.
    """
    flat = [(name, part) for run in runs for name, part in run.items()]
    if len({name for name, _ in flat}) == len(flat):
        return {name: part for name, part in flat}
    latest: dict[str, int] = {}
    for i, (_, part) in enumerate(flat):
        for row in part["rows"]:
            latest[row["adapter"]] = i
    out: dict[str, dict[str, Any]] = {}
    for i, (name, part) in enumerate(flat):
        label = chr(ord("A") + len(out))  # runs whose rows were all rerun get no label
        rows = [dict(r, run=label) for r in part["rows"] if latest[r["adapter"]] == i]
        if rows:
            out[f"{name} ({label})"] = dict(part, rows=rows, label=label, part=name)
    return out


def _run_command(argv: Sequence[str]) -> str:
    return "python bench/hunt.py " + " ".join(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=sorted(PARTS), help="run one part here")
    parser.add_argument(
        "--only",
        nargs="*",
        default=(),
        help="adapters of the part to run (libraries with --reports)",
    )
    parser.add_argument("--samples", type=int, help="final-audit samples of every row")
    parser.add_argument("--json", help="write the part's rows to this file")
    parser.add_argument("--combine", nargs="*", help="parts' JSON files to combine")
    parser.add_argument("--out", help="write the Markdown page here")
    parser.add_argument("--notes", help="a Markdown file shown under the page's summary")
    parser.add_argument(
        "--reports", choices=sorted(PARTS), help="regenerate a part's reproductions (reports/hunt)"
    )
    args = parser.parse_args(argv)
    if args.reports:
        write_reports(args.reports, args.only)
        return 0
    if args.part:
        parts = {
            args.part: {
                "environment": environment(),
                "features": sorted(available_features()),
                "rows": run_part(args.part, args.only, args.samples),
            }
        }
        if args.json:
            Path(args.json).write_text(json.dumps(parts, indent=2, default=str) + "\n")
    elif args.combine:
        runs = []
        for path in args.combine:
            if not Path(path).exists():
                print(f"[hunt] {path} missing: that part did not run", file=sys.stderr)
                continue
            runs.append(json.loads(Path(path).read_text()))
        parts = combine(runs)
    else:
        parser.error("give --part or --combine")
    command = "nox -s hunt" if args.combine else _run_command(argv or sys.argv[1:])
    if args.combine and len(parts) > len(PARTS):
        command = _run_command(argv or sys.argv[1:])
    notes = Path(args.notes).read_text() if args.notes else ""
    page = markdown(parts, command, notes)
    print(page)
    if args.out:
        Path(args.out).write_text(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
