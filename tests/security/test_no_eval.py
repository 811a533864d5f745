"""No text is ever evaluated as Python: an ``ast`` scan of ``dpaudit/`` and ``mechanisms/``.

The scan fails on any call of ``eval``, ``exec``, ``compile`` (the builtin, not
``re.compile``), ``parse_expr``, ``sympify`` outside :mod:`dpaudit.expressions.convert` (the one
converter, which calls it only with ``strict=True`` on non-strings) or ``sympy.S(...)`` /
``S(...)`` of anything but a literal number.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCANNED = ("dpaudit", "mechanisms")
CONVERTER = pathlib.Path("dpaudit/expressions/convert.py")
FORBIDDEN_NAMES = {"eval", "exec", "compile", "parse_expr", "sympify", "__import__"}


def _called_name(func: ast.expr) -> tuple[str | None, str | None]:
    """(base, attribute) of a call target: ``eval`` -> (None, 'eval'),
    ``sympy.sympify`` -> ('sympy', 'sympify')."""
    if isinstance(func, ast.Name):
        return None, func.id
    if isinstance(func, ast.Attribute):
        base = func.value.id if isinstance(func.value, ast.Name) else "?"
        return base, func.attr
    return None, None


def _offences(source: str, path: pathlib.Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        base, name = _called_name(node.func)
        where = f"{path}:{node.lineno}"
        if name in ("eval", "exec", "compile", "__import__") and base in (None, "builtins"):
            out.append(f"{where}: {name}(...)")
        elif name == "parse_expr":
            out.append(f"{where}: parse_expr(...)")
        elif name == "sympify":
            strict = any(
                k.arg == "strict" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            )
            if path != CONVERTER or not strict:
                out.append(
                    f"{where}: sympify(...) outside the converter (use dpaudit.expressions.as_expr)"
                )
        elif name == "S" and base in (None, "sympy"):
            args = node.args
            literal = (
                len(args) == 1
                and isinstance(args[0], ast.Constant)
                and isinstance(args[0].value, (int, float))
                and not isinstance(args[0].value, bool)
            )
            if not literal:
                out.append(f"{where}: sympy.S(<non-literal>)")
    return out


def _files() -> list[pathlib.Path]:
    return sorted(p.relative_to(ROOT) for d in SCANNED for p in (ROOT / d).rglob("*.py"))


def test_scan_covers_the_package():
    files = _files()
    assert CONVERTER in files and pathlib.Path("dpaudit/parse.py") in files
    assert len(files) > 50


@pytest.mark.slow
def test_no_call_evaluates_text():
    offences = []
    for path in _files():
        offences += _offences((ROOT / path).read_text(encoding="utf-8"), path)
    assert not offences, "text may be evaluated as Python:\n" + "\n".join(offences)


@pytest.mark.parametrize(
    "snippet",
    [
        "eval(x)",
        "exec(x)",
        "compile(x, 'f', 'eval')",
        "builtins.eval(x)",
        "__import__(x)",
        "sympy.sympify(x)",
        "sympify(x, rational=True)",
        "parse_expr(x)",
        "sympy.parsing.sympy_parser.parse_expr(x)",
        "sympy.S(x)",
        "S('1/3')",
    ],
)
def test_the_scan_catches_each_forbidden_call(snippet):
    # the scan must be able to fail: each forbidden form is reported
    assert _offences(snippet, pathlib.Path("dpaudit/somewhere.py"))


@pytest.mark.parametrize(
    "snippet", ["re.compile('a')", "sympy.S(1)", "x.eval()", "sympy.Rational(1, 3)"]
)
def test_the_scan_allows_harmless_calls(snippet):
    assert not _offences(snippet, pathlib.Path("dpaudit/somewhere.py"))
