"""Fuzz run of the command line and of the API (issue 15, "Done when").

A fixed-seed generator writes argv lists (random subcommands and flags; numbers such as 1e309,
-0, nan, inf, 1e-400 and thousand-digit integers; unicode, empty and very long strings;
injection strings) and runs each in-process through ``dpaudit.cli.main`` under a per-case
time limit.  Every case must end with exit code 0, 1 or 2 (3 is a bug), print no traceback,
print valid RFC 8259 JSON on stdout whenever ``--json`` was given, create no file (a canary
that the injection strings try to create), and print no unsound number (an upper bound that
is negative or NaN).  The API fuzz calls ``account`` and ``audit`` with bad parameters and
accepts only a result or a ``ValueError``/``TypeError`` with a message.

The default suite runs :data:`CASES` cases (a few seconds); ``-m slow`` runs
:data:`SLOW_CASES` more.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import random
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sympy

import dpaudit.parse
from dpaudit.accountant import account
from dpaudit.audit import audit
from dpaudit.cli import main
from dpaudit.events import ZCDP, Gaussian, Laplace, RandomizedResponse, SelfComposed
from dpaudit.numeric import float_down

CASES = 300
SLOW_CASES = 3000
#: Seconds a case may take before it counts as a hang.
CASE_TIME_LIMIT = 20

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="needs SIGALRM (POSIX)")


class Hang(BaseException):
    """A case ran over CASE_TIME_LIMIT."""


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"over {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ---- the generator ---------------------------------------------------------------------------


def numbers(canary: Path) -> list[str]:
    return [
        "1", "0.5", "0", "-0", "-1", "1e309", "-1e309", "1e-400", "1e-320", "nan", "NaN", "inf",
        "-inf", "Infinity", "1e300", "1" + "0" * 400, "9" * 5000, "",
        " ", "１", "٣", "1_000", "0x10", "1/3", "2**1000", "1e", "--1", "+1", "1,5", "0.1.2",
        f"__import__('os').system('touch {canary}')", "True", "None", "[]", "{}",
    ]  # fmt: skip


def injections(canary: Path) -> list[str]:
    c = str(canary)
    return [
        f"__import__('os').system('touch {c}')",
        f"open('{c}', 'w')",
        "Laplace(1).__class__.__mro__[1].__subclasses__()",
        f"exec(\"open('{c}','w')\")",
        f"eval(\"open('{c}','w')\")",
        "lambda: 0",
        "().__class__.__base__",
        "'{0.__class__}'.format(1)",
        f"Laplace(__import__('os').system('touch {c}'))",
        f"Laplace(1); open('{c}', 'w')",
        f"$(touch {c})",
        f"`touch {c}`",
        f"; touch {c}",
        "Ｌａｐｌａｃｅ(1)",
        "Lаplace(1)",  # Cyrillic a
        "Laplace(1)\x00",
        "Laplace(\u202e1)",
        "(" * 5000 + "1" + ")" * 5000,
        "1+" * 5000 + "1",
        "Laplace(1)" * 1000,
        "x" * 100_000,
        "",
        " ",
        "\n",
        "<script>alert(1)</script>",
        "| col |",
        "](javascript:alert(1))",
        "%s%s%s%n",
        "{__import__}",
        "f'{__import__}'",
        "Laplace(scale=1, __class__=1)",
        "Laplace(**{'scale': 1})",
        "Laplace(*[1])",
        "Laplace(1)[0]",
        "Laplace(1).scale",
    ]


def expressions(r: random.Random, canary: Path, large_k: bool) -> str:
    n = r.choice(numbers(canary))
    k = r.choice(
        ["1", "2", "10", "0", "-1", "1e12", "10**12", "9" * 50, "nan", "1.5"]
        + (["1000", "1000000", "10**12"] if large_k else [])
    )
    forms = [
        f"Laplace({n})",
        f"Gaussian({n})",
        f"SelfComposed(Laplace({n}), {k})",
        f"SelfComposed(Laplace(1), {k})",
        f"Composed(Laplace({n}), Gaussian({n}))",
        f"Subsampled(Laplace(1), {n})",
        f"PureDP({n})",
        f"ApproxDP({n}, {r.choice(numbers(canary))})",
        f"GroupPrivacy(Laplace(1), {k})",
        r.choice(injections(canary)),
    ]
    return r.choice(forms)


#: Commands that read expressions (they rely on the restricted parser of issue 15 part 1).
EXPRESSION_COMMANDS = ("account", "explain", "compare", "verify")
#: The others (and command lines without a valid command).
OTHER_COMMANDS = ("audit", "audit", "report", "bogus", "")


def case(
    r: random.Random, canary: Path, out: Path, commands: tuple[str, ...], large_k: bool = False
) -> list[str]:
    """One random argv whose command is drawn from ``commands``."""
    num = lambda: r.choice(numbers(canary))  # noqa: E731
    command = r.choice(commands)
    argv: list[str] = []
    if r.random() < 0.1:
        argv.append(r.choice(["--version", "-h", "--bogus"]))
    if command:
        argv.append(command)
    if command in ("account", "explain"):
        argv.append(expressions(r, canary, large_k))
        if r.random() < 0.6:
            argv += ["--delta", num()]
        if r.random() < 0.2:
            argv += ["--symbols", r.choice(["x", "x,y", "__class__", "", "Laplace", "1", "é"])]
        if r.random() < 0.2:
            argv.append("--latex")
    elif command == "compare":
        argv.append(r.choice([f"Laplace({num()})", "Laplace(10)", r.choice(injections(canary))]))
        if r.random() < 0.7:
            argv += [
                "--k",
                r.choice(
                    ["1,2", "0", "-1", "9" * 30, "1," * 200, "a,b", ""]
                    + (["1e12", "1000000", "1000000000000"] if large_k else [])
                ),
            ]
        if r.random() < 0.5:
            argv += ["--delta", num()]
    elif command == "verify":
        argv.append(
            r.choice(
                [
                    f"exp(x) - 1 <= {num()}*x",
                    f"x <= {num()}",
                    "x**2 >= 0",
                    r.choice(injections(canary)),
                ]
            )
        )
        argv += ["--domain", r.choice([f"0 < x <= {num()}", "", "x > 0", "__class__ > 0"])]
        argv += ["--time-limit", r.choice(["1", "1", num()])]
    elif command == "audit":
        argv.append(r.choice(["_fuzz_mechanisms:laplace"] * 4 + ["nosuch:thing", "os", ":x"]))
        argv += ["--d0", r.choice(["0", "[1, 0]", "1e309", "NaN", "[", '{"a": 1}', "[]"])]
        argv += ["--d1", r.choice(["1", "[1, 1]", "-1e309", '"x"', "[[[[]]]]", "null"])]
        argv += ["--epsilon", r.choice(["1", "1", num()])]
        argv += [
            "--samples",
            r.choice(["200", "500", "10", "9", "0", "-1", "1e3", num(), "1" * 30]),
        ]
        if r.random() < 0.4:
            argv += ["--delta", num()]
        if r.random() < 0.3:
            argv += ["--confidence", num()]
        if r.random() < 0.3:
            argv += ["--seed", r.choice(["0", "-1", "1" * 100, num()])]
        if r.random() < 0.2:
            argv += ["--workers", r.choice(["0", "-1", "1000000", "64", num()])]
        if r.random() < 0.2:
            argv += ["--max-memory", r.choice(["1", "0", "-1", num()])]
        if r.random() < 0.1:
            argv += ["--query-pairs", r.choice(["0", "-1", "1" * 20, "1000000000", "3"])]
        if r.random() < 0.1:
            argv += ["--exact"]
        argv.append("--no-progress")
    elif command == "report":
        argv += r.choice(
            [
                [r.choice(injections(canary)), "--out", str(out)],
                ["no/such-target", "--out", str(out)],
                ["--check", str(out / "nowhere")],
                ["catalogue/laplace-count"],  # no --out
                ["--format", r.choice(["pdf", "", "md;rm"]), "x"],
                ["--seed", num(), "--list"],
            ]
        )
    if r.random() < 0.5:
        argv.append("--json")
    if r.random() < 0.1:  # a random extra flag
        argv.insert(r.randrange(len(argv) + 1), r.choice(["--", "-", "--json=1", "--x", "-x"]))
    return argv


# ---- the checks ------------------------------------------------------------------------------


def _no_constant(name: str) -> Any:
    raise ValueError(f"bare {name} is not RFC 8259 JSON")


def check_numbers(value: Any, where: str) -> None:
    """No unsound number: every epsilon is >= 0, and finite or the string "inf"."""
    if isinstance(value, dict):
        for key, item in value.items():
            if "epsilon" in str(key) and not isinstance(item, (dict, list)):
                assert (
                    item is None
                    or item == "inf"
                    or (isinstance(item, (int, float)) and math.isfinite(item) and item >= 0)
                    or (isinstance(item, str) and key.endswith(("exact", "_theorem")))
                ), (where, key, item)
            check_numbers(item, where)
    elif isinstance(value, list):
        for item in value:
            check_numbers(item, where)


def run_case(argv: list[str], canary: Path) -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    with (
        time_limit(CASE_TIME_LIMIT),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
    ):
        try:
            code = main(argv)
        except SystemExit as exc:  # pragma: no cover - main() must return, not exit
            pytest.fail(f"main({argv!r}) raised SystemExit({exc.code})")
    out, err = stdout.getvalue(), stderr.getvalue()
    where = f"argv={[a[:80] for a in argv]!r} code={code} stderr={err[-500:]!r}"
    assert code in (0, 1, 2, 4), where  # 4: verify undecided
    assert "Traceback" not in err and "Traceback" not in out, where
    assert not canary.exists(), f"side effect: {canary} created by {where}"
    if "--json" in argv and out.strip() and "-h" not in argv and "--version" not in argv:
        data = json.loads(out, parse_constant=_no_constant)
        check_numbers(data, where)
    if code == 2:
        assert err.strip(), where
        assert len(err.strip().splitlines()) == 1, where


@pytest.fixture()
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    return tmp_path / "CANARY", tmp_path / "out"


def _run(
    n: int, seed: int, sandbox: tuple[Path, Path], commands: tuple[str, ...], large_k: bool = False
) -> None:
    canary, out = sandbox
    r = random.Random(seed)
    for _ in range(n):
        run_case(case(r, canary, out, commands, large_k), canary)


#: The expression parser this checkout has: the ``ast``-based one evaluates some inputs into
#: Python objects (``{}`` becomes a dict, ``x[0]`` a subscript) and recurses without a depth
#: limit, which the fuzz run finds (exit code 3).  Issue 15 part 1 replaces it.
OLD_PARSER = "import ast" in Path(dpaudit.parse.__file__).read_text(encoding="utf-8")
needs_new_parser = pytest.mark.xfail(
    OLD_PARSER,
    strict=True,
    raises=AssertionError,
    reason="the ast-based parser turns some text into Python objects (issue 15 part 1)",
)


@pytest.mark.slow
def test_cli_fuzz(sandbox: tuple[Path, Path]) -> None:
    _run(CASES // 2, 15, sandbox, OTHER_COMMANDS)


@pytest.mark.slow
@needs_new_parser
def test_cli_fuzz_expressions(sandbox: tuple[Path, Path]) -> None:
    _run(CASES // 2, 16, sandbox, EXPRESSION_COMMANDS)


@pytest.mark.slow
def test_cli_fuzz_large(sandbox: tuple[Path, Path]) -> None:
    _run(SLOW_CASES // 2, 1515, sandbox, OTHER_COMMANDS)


@pytest.mark.slow
@needs_new_parser
def test_cli_fuzz_expressions_large(sandbox: tuple[Path, Path]) -> None:
    _run(SLOW_CASES // 2, 1516, sandbox, EXPRESSION_COMMANDS, large_k=True)


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "_fuzz_mechanisms:laplace", "--samples", "x", "--json"],
        ["account", "--json"],
        ["explain", "Laplace(1", "--json"],
        ["bogus", "--json"],
        ["--json"],
    ],
)
def test_usage_errors_are_json_under_json(argv: list[str], sandbox: Any, capsys: Any) -> None:
    assert main(argv) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["exit_code"] == 2 and error["type"] == "bad_input" and error["message"]


def test_internal_error_is_exit_3_with_a_bug_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from dpaudit.cli import account as account_cli

    def boom(args: Any) -> int:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(account_cli, "run", boom)
    assert main(["account", "Laplace(1)", "--json"]) == 3
    captured = capsys.readouterr()
    assert "internal error: ZeroDivisionError: a bug" in captured.err
    assert "please file an issue" in captured.err and "Traceback" not in captured.err
    assert json.loads(captured.out)["error"]["type"] == "internal_error"
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "account", "Laplace(1)"])


def test_help_and_version_exit_0(capsys: Any) -> None:
    assert main(["--help"]) == 0
    assert "exit codes: 0 ok; 1 claim violated" in capsys.readouterr().out
    assert main(["audit", "--help"]) == 0
    assert "3 internal error" in capsys.readouterr().out
    assert main(["--version"]) == 0


def test_infinite_epsilon_is_the_string_inf(capsys: Any) -> None:
    assert main(["compare", "Laplace(1e-300)", "--k", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out, parse_constant=_no_constant)
    assert "inf" in {v for col in data["epsilon"].values() for v in col.values()}


# ---- API fuzz ----------------------------------------------------------------------------------

BAD = [
    float("nan"), float("inf"), -float("inf"), -1, -0.0, 0, 1e-400, 1e309, 10**400, 2**64,
    True, None, "1", b"1", [1], {"a": 1}, object(), 1 + 1j, np.float64("nan"), np.int64(-5),
]  # fmt: skip


def _expect_clear_error(fn: Any) -> Any:
    try:
        return fn()
    except (ValueError, TypeError) as err:
        assert str(err).strip(), f"{type(err).__name__} without a message"
        return None


def test_api_fuzz_audit() -> None:
    r = random.Random(7)
    names = ["epsilon", "delta", "samples", "confidence", "workers", "batch_size",
             "max_memory_bytes", "seed", "selection_fraction", "certify_top",
             "max_outcomes"]  # fmt: skip

    def mechanism(d: float, rng: np.random.Generator) -> float:
        return float(d + rng.laplace())

    for _ in range(120):
        kwargs: dict[str, Any] = dict(epsilon=1.0, samples=100, seed=0)
        for name in r.sample(names, r.randint(1, 3)):
            kwargs[name] = r.choice(BAD)
        if kwargs.get("workers") not in (None, 1):
            kwargs["workers"] = r.choice([0, -1, 10**6, 1.5, None, "2"])  # never fork here
        with time_limit(CASE_TIME_LIMIT):
            result = _expect_clear_error(lambda kw=kwargs: audit(mechanism, 0.0, 1.0, **kw))
        if result is not None:
            assert result.epsilon_lower >= 0 and not math.isnan(result.epsilon_lower), kwargs


def test_api_fuzz_account() -> None:
    r = random.Random(8)
    for _ in range(120):
        scale, delta, k = r.choice([*BAD, 1.0]), r.choice([*BAD, 1e-6, None]), r.choice([*BAD, 3])

        def run(scale: Any = scale, delta: Any = delta, k: Any = k) -> Any:
            base = r.choice([Laplace, Gaussian])(scale)
            return account(SelfComposed(base, k) if k != 1 else base, delta)

        with time_limit(CASE_TIME_LIMIT):
            g = _expect_clear_error(run)
        if g is not None and not g.symbolic:
            assert g.epsilon_upper >= 0 and not math.isnan(g.epsilon_upper), (scale, delta, k)


@pytest.mark.parametrize("k", [10**6, 10**12])
def test_gaussian_composition_with_large_k_is_bounded(k: int) -> None:
    """A composition of Gaussians is exactly Gaussian: the analytic bound is certified to
    1e-9, so the accountant skips the privacy loss distribution (it took ~90 s at 10^6)."""
    with time_limit(CASE_TIME_LIMIT):
        g = account(SelfComposed(Gaussian(1), k), 1e-6)
    assert g.theorem.key == "gaussian_analytic"
    assert "not computed: privacy loss distribution" in g.text()


@pytest.mark.parametrize(
    "event",
    [
        Laplace(sympy.Rational(1, 3)),
        Gaussian(1),
        ZCDP(1),
        RandomizedResponse(1),
        SelfComposed(Laplace(1), 10),
    ],
    ids=str,
)
@pytest.mark.parametrize(
    "delta",
    [sympy.Rational(999999999999, 10**12), 1 - sympy.Rational(1, 2**52), sympy.Rational(9, 10)],
)
def test_account_never_returns_a_negative_epsilon(event: object, delta: sympy.Expr) -> None:
    # the fuzz run found the zCDP optimal conversion (CKS20 Cor. 13) at -8.52 for Laplace(1/3)
    # at delta = 1 - 1e-12; (eps, delta)-DP implies (max(eps, 0), delta)-DP
    g = account(event, delta)
    assert g.epsilon_upper >= 0, g.epsilon_upper
    assert g.epsilon_lower_float is None or 0 <= g.epsilon_lower_float <= g.epsilon_upper
    assert float_down(g.epsilon) >= 0, g.epsilon  # the exact epsilon too, not only its float


def test_fuzz_mechanisms_module_is_importable() -> None:
    # the CLI cases import it through sys.path (the sandbox fixture puts tests/cli first)
    sys.path.insert(0, os.fspath(Path(__file__).parent))
    try:
        import _fuzz_mechanisms

        assert _fuzz_mechanisms.laplace.epsilon == 1.0
    finally:
        sys.path.remove(os.fspath(Path(__file__).parent))


def test_every_generated_argument_is_text(tmp_path: Path) -> None:
    # a payload list once held a bound method instead of a string, which only the slow run met
    r = random.Random(1515)
    for _ in range(SLOW_CASES):
        argv = case(r, tmp_path / "canary", tmp_path, OTHER_COMMANDS, True)
        assert all(isinstance(a, str) for a in argv), argv
