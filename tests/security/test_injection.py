"""Injection payloads against every entry point that takes text.

Each payload must be refused with a clean ``ValueError`` (the parser's ``ExpressionError`` or
the entry point's own), create no file, and return within :data:`SECONDS` (in process); on
the command line it must exit 2 with one line on stderr and no traceback.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import time

import pytest

from dpaudit.accountant import Accountant, account
from dpaudit.cli import main
from dpaudit.events import Laplace
from dpaudit.expressions import as_expr, parse_expression
from dpaudit.numeric import exact
from dpaudit.parse import ExpressionError, parse_event, parse_number
from dpaudit.pytest_plugin import assert_claim_verified
from dpaudit.verify import Claim, Domain, Step
from dpaudit.verify.engine import verify_inequality

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: CPU seconds (not wall clock: a loaded CI machine must not fail a test) a refusal may take.
SECONDS = 2.0
CANARY = "CANARY"


def payloads(canary: pathlib.Path) -> dict[str, str]:
    return {
        "subclasses": "().__class__.__bases__[0].__subclasses__()",
        "import-call": f"__import__('os').system('touch {canary}')",
        "lambda": "lambda: 0",
        "import": "import os",
        "format": "'{0.__class__}'.format(1)",
        "f-string": "f'{__import__(\"os\").getcwd()}'",
        "walrus": "(x := 1)",
        "comprehension": "[x for x in (1, 2)]",
        "fullwidth": "\uff45\uff58\uff50(1)",  # fullwidth 'exp'
        "cyrillic": "\u0435xp(1)",  # Cyrillic 'e' in exp
        "tower": "9**9**9**9",
        "parens": "(" * 100_000,
        "megabyte": "1" * 1_000_000,
        "long": "1+" * 50_000 + "1",  # fits one command-line argument (128 KiB), over the limit
        "digits": "7" * 5_000,
        "attribute": "Laplace(1).__class__",
        "dunder-name": "__builtins__",
    }


def _entry_points() -> dict[str, object]:
    dom = Domain({"x": "(0, 1)"})
    return {
        "parse_event": lambda p: parse_event(p),
        "parse_event(symbols=True)": lambda p: parse_event(p, symbols=True),
        "parse_number": parse_number,
        "exact": lambda p: exact(p, "epsilon"),
        "Domain.parse": Domain.parse,
        "Domain(range)": lambda p: Domain({"x": p}),
        "Domain(constraints)": lambda p: Domain({"x": "(0, 1)"}, constraints=[p]),
        "Domain(range end)": lambda p: Domain({"x": f"(0, {p})"}),
        "Claim(epsilon)": lambda p: Claim(
            key="t/1",
            document="d",
            theorem="t",
            statement="s",
            plan=Laplace(1),
            epsilon=p,
            delta=0,
            domain=dom,
        ),
        "Claim(step)": lambda p: Claim(
            key="t/1",
            document="d",
            theorem="t",
            statement="s",
            plan=Laplace(1),
            epsilon=1,
            delta=0,
            domain=dom,
            steps=(Step("s", p),),
        ),
        "verify_inequality": lambda p: verify_inequality(p, dom, time_limit=1),
        "Accountant(assume)": lambda p: Accountant(assume=[p]),
        "account(delta)": lambda p: account(Laplace(1), delta=p),
        "assert_claim_verified(domain)": lambda p: assert_claim_verified(
            plan=Laplace(1), epsilon=1, domain=p
        ),
        "assert_claim_verified(epsilon)": lambda p: assert_claim_verified(
            plan=Laplace(1), epsilon=p, domain="0 < x < 1"
        ),
    }


ENTRY_POINTS = sorted(_entry_points())
KINDS = sorted(payloads(pathlib.Path(CANARY)))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_payload_is_refused_in_process(entry, kind, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    canary = tmp_path / CANARY
    payload = payloads(canary)[kind]
    call = _entry_points()[entry]
    start = time.process_time()
    with pytest.raises(ValueError) as info:
        call(payload)
    elapsed = time.process_time() - start
    assert not canary.exists(), f"{entry} ran the payload {kind}"
    assert elapsed < SECONDS, f"{entry} took {elapsed:.2f} s on {kind}"
    message = str(info.value)
    assert message and "\n" not in message and len(message) < 1000


def test_the_parser_names_the_limit():
    for text, pattern in [
        ("9**9**9**9", "power too large"),
        ("(" * 5_000, "nested too deep"),
        ("1" * 1_000_000, "too long"),
        ("7" * 5_000, "5000 digits"),
        ("\uff45xp(1)", "U\\+FF45"),
        ("__import__", "starts with '_'"),
    ]:
        with pytest.raises(ExpressionError, match=pattern):
            parse_number(text)


COMMANDS = {
    "account": lambda p: ["account", p],
    "account --delta": lambda p: ["account", "Laplace(1)", "--delta", p],
    "explain": lambda p: ["explain", p],
    "compare": lambda p: ["compare", p],
    "verify": lambda p: ["verify", p, "--domain", "0 < x < 1"],
    "verify --domain": lambda p: ["verify", "x <= 1", "--domain", p],
    "calibrate": lambda p: ["calibrate", p, "--for", "s", "--epsilon", "1", "--delta", "0"],
    "calibrate --epsilon": lambda p: [
        "calibrate",
        "Laplace(s)",
        "--for",
        "s",
        "--epsilon",
        p,
        "--delta",
        "0",
    ],
}
#: a representative subset per command
CLI_KINDS = ("import-call", "subclasses", "lambda", "cyrillic", "tower", "digits", "long")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_payload_is_refused_by_the_command(command, tmp_path, monkeypatch, capsys):
    """Every payload through the CLI's own entry point (in-process: the same ``main`` the
    console script calls): exit 2, one line on stderr, no traceback, no side effect."""
    canary = tmp_path / CANARY
    texts = payloads(canary)
    monkeypatch.chdir(tmp_path)
    for kind in CLI_KINDS:
        argv = COMMANDS[command](texts[kind])
        start = time.process_time()
        code = main(argv)
        elapsed = time.process_time() - start
        out, err = capsys.readouterr()
        where = f"{command} {kind}: rc={code} stderr={err[-300:]!r}"
        assert code == 2, where
        assert "Traceback" not in err + out, where
        assert err.count("\n") == 1, where
        assert not canary.exists(), where
        assert elapsed < 5, f"{where} took {elapsed:.1f} s"


#: the whole path from a shell: two commands, the injection found on the old parser first
SUBPROCESS_COMMANDS = ("verify --domain", "account")


@pytest.mark.parametrize("command", SUBPROCESS_COMMANDS)
def test_payload_is_refused_on_the_command_line(command, tmp_path):
    canary = tmp_path / CANARY
    argv = COMMANDS[command](payloads(canary)["import-call"])
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dpaudit", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    elapsed = time.perf_counter() - start
    where = f"{command}: rc={proc.returncode} stderr={proc.stderr[-300:]!r}"
    assert proc.returncode == 2, where
    assert "Traceback" not in proc.stderr + proc.stdout, where
    assert proc.stderr.count("\n") == 1, where
    assert not canary.exists(), where
    # interpreter and sympy start-up included: the work itself is bounded by the limits
    assert elapsed < 20, f"{where} took {elapsed:.1f} s"


#: Payloads that made sympy hang or evaluate text before the magnitude guards (found by a
#: second, independent parser review): each must be refused quickly.
HEAVY = [
    "floor(exp(exp(100)))",
    "sqrt(3**20000+1)",
    "(2*x)**(10**8)",
    "Max(exp(exp(50)), 1)",
    "ceiling(exp(10**4))",
]


@pytest.mark.parametrize("text", HEAVY)
def test_heavy_numbers_are_refused_before_sympy_computes_them(text):
    start = time.process_time()
    with pytest.raises(ExpressionError, match="too large"):
        parse_expression(text)
    assert time.process_time() - start < 2


@pytest.mark.parametrize(
    "value",
    [
        {"__import__('os').system('touch CANARY_DICT')": 1},
        {"__import__('os').system('touch CANARY_DICT')"},
        frozenset({"1"}),
        b"1+1",
    ],
    ids=["dict", "set", "frozenset", "bytes"],
)
def test_containers_of_text_are_refused_not_evaluated(value, tmp_path, monkeypatch):
    # sympify(strict=True) does not pass strict to a container's items
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="must be a number, a sympy expression or text"):
        as_expr(value)
    assert not (tmp_path / "CANARY_DICT").exists()
