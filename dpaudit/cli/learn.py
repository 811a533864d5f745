"""``dpaudit learn``: list the registered private learners, or fit one on a CSV file.

``dpaudit learn --curves [NAME ...] --out DIR [--seed S] [--quick]`` writes learning curves
(:mod:`dpaudit.learning_curves`).  ``dpaudit learn --list [--json]`` lists the learners that
packages register through the entry-point group ``dpaudit.learners``
(:mod:`dpaudit.learners`).  ``dpaudit learn NAME --train train.csv --test test.csv --label
COLUMN --epsilon E [--delta D] [--seed S]
[--param KEY=VALUE ...] [--json]`` fits NAME on the training file and reports its test
error and the accounted guarantee of the run (upper bounds, never above what was asked: a
learner whose plan would exceed it refuses to run).

CSV files: a header row, one column named by ``--label`` (any two distinct values), every
other column a number (for a boolean learner, 0 or 1).  Bad input is one line on stderr
(and a JSON error under ``--json``) with exit code 2.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpaudit.cli.exit_codes import dumps
from dpaudit.cli.numbers import float_option
from dpaudit.learners import get_learner, load_learners, progress

if TYPE_CHECKING:
    import numpy as np

__all__ = ["read_csv", "register", "run"]

_INT = re.compile(r"[+-]?\d+")
_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "learn",
        help="list the private learners, or fit one on a CSV file",
        description="List the registered private learners (--list), or fit NAME on a "
        "training CSV and report its test error and the accounted (epsilon, delta) of the run. "
        "Example: dpaudit learn net-margin --train train.csv --test test.csv --label y "
        "--epsilon 1",
    )
    p.add_argument(
        "name", nargs="*", help="the learner (see --list); with --curves, any number (default: all)"
    )
    p.add_argument("--list", action="store_true", help="list the learners")
    p.add_argument(
        "--curves",
        action="store_true",
        help="write learning curves (error against n and epsilon, with baselines) to --out",
    )
    p.add_argument("--out", help="with --curves: the output directory (PNG, Markdown, JSON)")
    p.add_argument(
        "--quick", action="store_true", help="with --curves: a tiny grid (seconds per learner)"
    )
    p.add_argument("--train", help="training CSV (header row; numeric features)")
    p.add_argument("--test", help="test CSV (same columns)")
    p.add_argument("--label", help="the label column (exactly two distinct values)")
    p.add_argument("--epsilon", type=str, help="privacy parameter epsilon > 0")
    p.add_argument("--delta", type=str, help="privacy parameter delta in (0, 1)")
    p.add_argument("--seed", type=str, help="random seed (integer >= 0; default: fresh)")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another constructor argument of the learner (a number or a word), repeatable",
    )
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(func=run)


def _seed(text: str | None) -> int | None:
    if text is None:
        return None
    if not _INT.fullmatch(text.strip()) or int(text) < 0:
        raise ValueError(f"--seed must be an integer in [0, inf), got {text!r}")
    return int(text)


def _params(items: list[str]) -> dict[str, Any]:
    """KEY=VALUE pairs: an integer, a float, or a word (never evaluated)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not _NAME.fullmatch(key) or not raw:
            raise ValueError(f"--param must look like KEY=VALUE (e.g. dimension=10), got {item!r}")
        if key in ("epsilon", "delta", "random_state"):
            raise ValueError(f"--param {key}: give it as --{key.replace('random_state', 'seed')}")
        if _INT.fullmatch(raw):
            out[key] = int(raw)
        else:
            try:
                value = float(raw)
            except ValueError:
                value = None
            if value is not None and math.isfinite(value):
                out[key] = value
            elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", raw):
                out[key] = {"true": True, "false": False}.get(raw.lower(), raw)
            else:
                raise ValueError(f"--param {key} must be a finite number or a word, got {raw!r}")
    return out


def read_csv(path: str, label: str, flag: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(features, labels, feature names) of a CSV file with a header row.

    Raises:
        ValueError: (one line) for an empty file, a missing label column, a row of the wrong
            length, an empty or non-numeric feature, or no feature column.
        OSError: for a file that cannot be read.
    """
    import numpy as np  # here, not at start-up: listing and refusing import no numerics

    file = Path(path)
    if not file.is_file():
        raise ValueError(f"{flag} must name a readable CSV file, got {path!r} (no such file)")
    try:
        with file.open(newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except (csv.Error, UnicodeDecodeError) as err:
        raise ValueError(f"{flag} {path!r} is not a readable CSV file: {err}") from None
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise ValueError(f"{flag} {path!r}: the file is empty (a header row is needed)")
    header = [h.strip() for h in rows[0]]
    if label not in header:
        raise ValueError(
            f"--label must name a column of {flag} {path!r}, got {label!r} "
            f"(columns: {', '.join(header)})"
        )
    if len(rows) < 2:
        raise ValueError(f"{flag} {path!r}: no data rows after the header")
    j = header.index(label)
    names = [h for i, h in enumerate(header) if i != j]
    if not names:
        raise ValueError(f"{flag} {path!r}: no feature column besides the label {label!r}")
    X = np.empty((len(rows) - 1, len(names)))
    y: list[str] = []
    for r, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ValueError(
                f"{flag} {path!r} line {r}: {len(row)} fields, the header has {len(header)}"
            )
        y.append(row[j].strip())
        cells = [c.strip() for i, c in enumerate(row) if i != j]
        for c, cell in enumerate(cells):
            try:
                value = float(cell)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise ValueError(
                    f"{flag} {path!r} line {r}: feature {names[c]!r} must be a finite number, "
                    f"got {cell!r}"
                )
            X[r - 2, c] = value
    if any(not v for v in y):
        raise ValueError(f"{flag} {path!r}: the label column {label!r} has empty cells")
    return X, np.asarray(y), names


def _labels(y: np.ndarray, y_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels as numbers when every one of both files is a finite number (so 1 and 1.0
    agree; integers stay integers), else as text."""
    import numpy as np

    try:
        a = np.asarray([float(v) for v in y])
        b = np.asarray([float(v) for v in y_test])
    except ValueError:
        return y, y_test
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return y, y_test
    if (a == np.round(a)).all() and (b == np.round(b)).all():
        return a.astype(np.int64), b.astype(np.int64)
    return a, b


def _show(bar: Any, done: int, total: int, n: int, d: int) -> None:
    """The fit's progress (a learner's loop: ``done`` of ``total``) on the bar's postfix."""
    bar.set_postfix_str(f"fitting n={n}, d={d}: {done}/{total} ({100 * done // max(total, 1)}%)")


def _list(args: argparse.Namespace) -> int:
    infos = load_learners()
    if args.json:
        print(dumps([info.described() for info in infos], indent=2))
        return 0
    width = max((len(i.name) for i in infos), default=4)
    for info in infos:
        print(f"{info.name:<{width}}  {info.task:<14} {info.privacy:<11} {info.source}")
        tuned = info.described()["regimes"].get("practical")
        if tuned:
            shown = ", ".join(f"{k}={v}" for k, v in tuned.items())
            print(f"{'':<{width}}  defaults: tuned constants ({shown}); --param regime=paper")
    return 0


def _curves(args: argparse.Namespace, names: list[str]) -> int:
    """``dpaudit learn --curves [NAME ...] --out DIR [--seed S] [--quick]``."""
    from dpaudit.learning_curves import FULL_GRID, QUICK_GRID, learning_curves, write_pages
    from dpaudit.learning_curves.compute import datasets_for

    if not args.out:
        raise ValueError("--out is required with --curves (the directory to write)")
    for flag in ("train", "test", "label", "epsilon", "delta"):
        if getattr(args, flag) is not None:
            raise ValueError(f"--{flag} is not used with --curves (the grids are fixed)")
    seed = _seed(args.seed)
    seed = 0 if seed is None else seed
    infos = [get_learner(name) for name in names] if names else load_learners()
    grid = dict(QUICK_GRID if args.quick else FULL_GRID)
    test = grid.pop("test")
    command = f"dpaudit learn --curves{' --quick' if args.quick else ''} --seed {seed}"
    if names:
        command = command.replace("--curves", "--curves " + " ".join(names), 1)
    results = []
    for info in infos:
        start = time.perf_counter()
        print(f"{info.name}: fitting", file=sys.stderr, flush=True)
        results.append(
            learning_curves(info.name, seed=seed, datasets=datasets_for(info, test=test), **grid)
        )
        print(
            f"{info.name}: done in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True
        )
    written = write_pages(results, args.out, command)
    if args.json:
        print(dumps({"written": [str(p) for p in written], "command": command}, indent=2))
    else:
        print(f"wrote {len(written)} files to {args.out} (index: {written[-1]})")
    return 0


def run(args: argparse.Namespace) -> int:
    names = list(args.name or [])
    if args.curves:
        if args.list:
            raise ValueError("--curves and --list exclude each other")
        return _curves(args, names)
    for flag in ("out", "quick"):
        if getattr(args, flag):
            raise ValueError(f"--{flag} is used only with --curves")
    if args.list:
        if names:
            raise ValueError(f"--list takes no learner name, got {names[0]!r}")
        return _list(args)
    if not names:
        raise ValueError("learn needs a learner NAME (see `dpaudit learn --list`) or --list")
    if len(names) > 1:
        raise ValueError(f"learn fits one learner NAME at a time, got {', '.join(names)}")
    args.name = names[0]
    for flag in ("train", "test", "label", "epsilon"):
        if getattr(args, flag) is None:
            raise ValueError(f"--{flag} is required to fit a learner")
    info = get_learner(args.name)
    epsilon = float_option("--epsilon", args.epsilon, 0.0, low_open=True)
    delta = float_option("--delta", args.delta, 0.0, 1.0, low_open=True)
    seed = _seed(args.seed)
    params = _params(args.param)
    estimator = info.estimator(**params) if params else info.estimator()
    accepted = estimator.get_params()
    unknown = [k for k in params if k not in accepted]
    if unknown:
        raise ValueError(
            f"--param {unknown[0]} is not a parameter of {info.name} (its parameters: "
            f"{', '.join(k for k in accepted if k not in ('epsilon', 'delta', 'random_state'))})"
        )
    settings: dict[str, Any] = {"epsilon": epsilon, "random_state": seed}
    if "delta" in accepted:
        if delta is not None:
            settings["delta"] = delta
    elif delta is not None and not args.json:
        print(f"note: {info.name} is {info.privacy}-DP; --delta {delta:g} is met with delta 0")
    estimator.set_params(**settings)

    import numpy as np
    from tqdm import tqdm

    bar = tqdm(
        total=3, desc=info.name, disable=True if args.json else None, file=sys.stderr, leave=False
    )
    with bar:
        bar.set_postfix_str("reading")
        X, y, names = read_csv(args.train, args.label, "--train")
        Xt, yt, names_t = read_csv(args.test, args.label, "--test")
        if names_t != names:
            raise ValueError(
                f"--test must have the same feature columns as --train ({', '.join(names)}), "
                f"got {', '.join(names_t)}"
            )
        y, yt = _labels(y, yt)
        classes = np.unique(y)
        if len(classes) != 2:
            raise ValueError(
                f"--label {args.label!r} must hold exactly two classes in --train, got "
                f"{len(classes)} ({', '.join(map(str, classes[:5].tolist()))}"
                f"{', ...' if len(classes) > 5 else ''})"
            )
        extra = sorted(set(np.unique(yt).tolist()) - set(classes.tolist()))
        if extra:
            raise ValueError(
                f"--test labels must be among the training classes "
                f"({', '.join(map(str, classes.tolist()))}), got {extra[0]!r}"
            )
        bar.update(1)
        bar.set_postfix_str(f"fitting n={len(X)}, d={X.shape[1]}")
        start = time.perf_counter()
        with progress(lambda done, total: _show(bar, done, total, len(X), X.shape[1])):
            estimator.fit(X, y)
        seconds = time.perf_counter() - start
        bar.update(1)
        bar.set_postfix_str("scoring")
        test_error = 1.0 - float(estimator.score(Xt, yt))
        train_error = 1.0 - float(estimator.score(X, y))
        bar.update(1)
    g = estimator.guarantee_
    result = {
        "learner": info.name,
        "task": info.task,
        "privacy": info.privacy,
        "source": info.source,
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "test_n": int(Xt.shape[0]),
        "classes": [c.item() if hasattr(c, "item") else c for c in estimator.classes_],
        "test_error": test_error,
        "train_error": train_error,
        "epsilon": g["epsilon"],
        "delta": g["delta"],
        "requested_epsilon": epsilon,
        "requested_delta": delta,
        "spent_epsilon": g["spent_epsilon"],
        "run_epsilon": g.get("run_epsilon", epsilon),
        "regime": g.get("regime"),
        "notes": list(g.get("notes", [])),
        "theorem": g["theorem"],
        "seconds": seconds,
        "seed": seed,
        "params": {k: v for k, v in estimator.get_params().items() if k != "random_state"},
        "settings": {
            k: v for k, v in getattr(estimator, "settings_", {}).items() if k != "random_state"
        },
    }
    if args.json:
        print(dumps(result, indent=2))
        return 0
    print(f"{info.name}: {info.source}")
    print(
        f"  data: n = {result['n']} training rows, d = {result['d']} features, "
        f"{result['test_n']} test rows; classes {result['classes']}"
    )
    print(
        f"  test error {test_error:.4f} (training error {train_error:.4f}), fit in {seconds:.2f} s"
    )
    print(
        f"  privacy ({info.privacy}): the run is ({g['epsilon']:.6g}, {g['delta']:.3g})-DP "
        f"(accounted upper bounds; asked epsilon {epsilon:g}"
        f"{'' if delta is None else f', delta {delta:g}'}; {g['theorem']})"
    )
    if g.get("regime"):
        print(f"  regime: {g['regime']}")
    for note in g.get("notes", []):
        print(f"  note: {note}")
    return 0
