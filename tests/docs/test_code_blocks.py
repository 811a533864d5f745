"""Every code block of ``README.md`` and ``docs/**/*.md`` runs, as the docs say it does.

The convention (also in the contributors' notes):

* ```` ```python ```` blocks run in order, in one namespace per file (a later block may use
  names an earlier one defined), in a temporary working directory of that file.  The README's
  blocks are the exception: each runs on its own, in a fresh namespace (a reader copies one
  block, not the page), sharing only the working directory -- the files earlier blocks wrote
  are there, as on the reader's disk.
* A python block directly preceded by ``<!-- file: NAME -->`` is the file the text names: it
  is written to ``NAME`` in the working directory (on the import path) before it runs, so a
  later block may ``import`` it, as a reader who saved it would.
* ```` ```bash ```` blocks: every line starting with ``dpaudit `` is split like a shell line
  (:func:`shlex.split`, ``#`` comments dropped, ``\\`` continuations joined) and run as
  ``sys.executable -m dpaudit ...`` (so the checkout's code is tested, not a ``dpaudit`` found
  on ``PATH``), in the file's temporary directory.  It must exit 0, unless the block is
  directly preceded by a line ``<!-- expect-exit: N -->``: then every such line must exit N.
  A bash block preceded by ``<!-- slow -->`` (alone or beside an expect-exit line) runs in the
  slow suite only (``-m slow``): commands that take more than a few seconds.
  Lines containing ``pip install``, ``pytest`` or ``dpaudit report all`` are not run (they
  install, run the whole suite, or take minutes); other lines (``dask worker``, ...) neither.
* ```` ```text ````, ```` ```console ```` and the data languages below are shown, not run.

A block with any other language tag fails :func:`test_every_block_has_a_known_language`, so no
code escapes the test by a typo (```` ```py ````, ```` ```sh ````).  Tests are parametrized
per file and block, named ``<file>:<line>-<language>``.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: Languages whose blocks run.
RUN = ("python", "bash")
#: Languages shown only: console transcripts, program output, configuration and data files.
SHOWN = ("text", "console", "yaml", "toml", "json", "ini", "html", "markdown")
#: Substrings that keep a ``dpaudit`` line of a bash block from running.
NOT_RUN = ("pip install", "pytest", "dpaudit report all")
#: Shell operators the harness does not emulate (a docs line must be one plain command).
SHELL_OPERATORS = {"|", "||", "&", "&&", ";", ">", ">>", "<", "<<", "(", ")"}
#: Wall-clock limit of one command: far above what a docs block should take (< 5 s), so
#: only a hang trips it.
COMMAND_TIMEOUT = 300

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
_EXPECT = re.compile(r"^\s*<!--\s*expect-exit:\s*(?P<code>\d+)\s*-->\s*$")
_SLOW = re.compile(r"^\s*<!--\s*slow\s*-->\s*$")
_FILE = re.compile(r"^\s*<!--\s*file:\s*(?P<name>[\w.\-]+)\s*-->\s*$")
#: Files whose python blocks each run on their own (a fresh namespace per block).
ISOLATED = (ROOT / "README.md",)


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown file."""

    path: Path
    line: int  # 1-based line of the first line of code (after the opening fence)
    language: str
    code: str
    expect_exit: int | None  # from a preceding <!-- expect-exit: N --> line
    slow: bool = False  # from a preceding <!-- slow --> line
    file: str | None = None  # from a preceding <!-- file: NAME --> line

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.line}-{self.language or 'none'}"


def parse_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order.

    Args:
        path: the Markdown file.

    Returns:
        The blocks; the code is dedented by the opening fence's indentation (blocks inside
        list items).

    Raises:
        ValueError: on a fence that is never closed.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, language = len(m["indent"]), m["fence"], m["info"].lower()
        markers = []  # the marker comments right above the fence (blank lines between allowed)
        for k in range(i - 1, -1, -1):
            if not lines[k].strip():
                continue
            if not (_EXPECT.match(lines[k]) or _SLOW.match(lines[k]) or _FILE.match(lines[k])):
                break
            markers.append(lines[k])
        expect = next((m for m in map(_EXPECT.match, markers) if m), None)
        slow = any(_SLOW.match(line) for line in markers)
        named = next((m["name"] for m in map(_FILE.match, markers) if m), None)
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                break
            text = lines[j]
            body.append(text[min(indent, len(text) - len(text.lstrip())) :])
            j += 1
        else:
            raise ValueError(f"{path}:{i + 1}: code fence never closed")
        blocks.append(
            Block(
                path,
                i + 2,
                language,
                "\n".join(body) + "\n",
                int(expect["code"]) if expect else None,
                slow,
                named,
            )
        )
        i = j + 1
    return blocks


ALL_BLOCKS = [b for p in DOC_FILES if p.exists() for b in parse_blocks(p)]
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.language == "python"]
BASH_BLOCKS = [b for b in ALL_BLOCKS if b.language == "bash"]


def command_lines(block: Block) -> list[tuple[int, str]]:
    """The ``dpaudit`` lines of a bash block that run, with their line numbers.

    Args:
        block: a bash block.

    Returns:
        ``(line number, command line)`` pairs, continuations joined.
    """
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for k, raw in enumerate(block.code.splitlines()):
        if not pending:
            start = block.line + k
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1].rstrip() + " "
            continue
        pending = ""
        if line.startswith("dpaudit ") and not any(s in line for s in NOT_RUN):
            out.append((start, line))
    return out


def shell_argv(line: str) -> list[str]:
    """A docs command line as the argv of ``sys.executable -m dpaudit``.

    Args:
        line: a line starting with ``dpaudit ``.

    Returns:
        The argv.

    Raises:
        ValueError: when the line uses a shell operator (pipe, redirection, ``&&``, ...) the
            harness does not emulate.
    """
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.commenters = "#"
    operators = [t for t in lexer if t in SHELL_OPERATORS]
    if operators:
        raise ValueError(
            f"line must be one plain dpaudit command, got operators {operators} in {line!r}"
        )
    return [sys.executable, "-m", "dpaudit", *shlex.split(line, comments=True)[1:]]


# ---- one namespace and one working directory per file ----------------------------------


@dataclasses.dataclass
class _FileState:
    cwd: Path
    namespace: dict[str, object]
    done: int = 0  # python blocks of the file already run
    failed: str | None = None  # the block that failed, if any


_STATES: dict[Path, _FileState] = {}


def _state(path: Path, factory: pytest.TempPathFactory) -> _FileState:
    if path not in _STATES:
        cwd = factory.mktemp(re.sub(r"\W+", "-", path.relative_to(ROOT).as_posix()))
        _STATES[path] = _FileState(cwd, {"__name__": "__docs__"})
    return _STATES[path]


def _run_python(block: Block, namespace: dict[str, object], cwd: Path | None = None) -> None:
    if block.file is not None:  # the file the text names, saved where the reader works
        (cwd or Path.cwd()).joinpath(block.file).write_text(block.code, encoding="utf-8")
    # pad with newlines: a traceback names the Markdown file and the line in it
    code = compile("\n" * (block.line - 1) + block.code, str(block.path), "exec")
    exec(code, namespace)  # the project's own documentation, not user input


def _run_python_blocks(
    state: _FileState, mine: list[Block], upto: int, block: Block | None
) -> None:
    """Run the file's python blocks ``mine[state.done:upto]`` in the file's namespace (those
    not yet run in this process); ``block`` is the block under test, whose own failure is
    raised as it is."""
    while state.done < upto:
        current = mine[state.done]
        if state.failed is not None:
            pytest.fail(
                f"an earlier python block of this file failed: {state.failed}", pytrace=False
            )
        # a file of ISOLATED: every block in a namespace of its own
        namespace = {"__name__": "__docs__"} if current.path in ISOLATED else state.namespace
        try:
            _run_python(current, namespace, state.cwd)
        except BaseException:
            state.failed = current.name
            if current is block:
                raise
            pytest.fail(
                f"an earlier python block of this file failed: {current.name}\n"
                + traceback.format_exc(),
                pytrace=False,
            )
        state.done += 1


#: Blocks whose commands take over 5 s in all (whole privacy curves, learners on files): run
#: in the slow suite.  Named by file and first line; a name that no longer matches a block
#: fails test_slow_blocks_exist.
def _params(blocks: list[Block]) -> list[object]:
    """One parameter per block; a file's blocks share an xdist group (``--dist loadgroup``
    in pyproject: one worker runs them, in order)."""
    return [
        pytest.param(
            b,
            id=b.name,
            marks=[
                pytest.mark.xdist_group(b.path.relative_to(ROOT).as_posix()),
                *([pytest.mark.slow] if b.slow else []),
            ],
        )
        for b in blocks
    ]


@pytest.mark.parametrize("block", _params(PYTHON_BLOCKS))
def test_python_block_runs(
    block: Block, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The block runs after the file's earlier python blocks, in their namespace."""
    state = _state(block.path, tmp_path_factory)
    monkeypatch.chdir(state.cwd)
    monkeypatch.syspath_prepend(str(state.cwd))  # the files the blocks saved are importable
    mine = [b for b in PYTHON_BLOCKS if b.path == block.path]
    _run_python_blocks(state, mine, mine.index(block) + 1, block)


def test_slow_marks_only_bash_blocks() -> None:
    """``<!-- slow -->`` defers a bash block; before a python block it would defer nothing
    (a file's later python blocks run the earlier ones)."""
    wrong = [b.name for b in ALL_BLOCKS if b.slow and b.language != "bash"]
    assert not wrong, f"<!-- slow --> before a block that is not bash: {wrong}"
    assert sum(b.slow for b in BASH_BLOCKS) >= 6  # the markers are read


@pytest.mark.parametrize("block", _params(BASH_BLOCKS))
def test_bash_block_commands_exit_as_documented(
    block: Block, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``dpaudit`` line of the block exits 0 (or the documented code), after the
    file's earlier python blocks (which may write the files a command reads).  They are run
    here when this process has not run them yet: pytest-xdist may send a file's blocks to
    different workers, and ``-m slow`` deselects the python blocks of a slow bash block."""
    state = _state(block.path, tmp_path_factory)
    mine = [b for b in PYTHON_BLOCKS if b.path == block.path]
    with monkeypatch.context() as patch:
        patch.chdir(state.cwd)
        patch.syspath_prepend(str(state.cwd))
        _run_python_blocks(state, mine, sum(b.line < block.line for b in mine), None)
    cwd = state.cwd
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        MPLBACKEND="Agg",
    )
    expected = 0 if block.expect_exit is None else block.expect_exit
    for line_no, line in command_lines(block):
        done = subprocess.run(
            shell_argv(line),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        assert done.returncode == expected, (
            f"{block.path.relative_to(ROOT)}:{line_no}: `{line}` exited {done.returncode}, "
            f"the docs say {expected}\n--- stdout ---\n{done.stdout[-3000:]}"
            f"\n--- stderr ---\n{done.stderr[-3000:]}"
        )


def test_every_block_has_a_known_language() -> None:
    unknown = [b.name for b in ALL_BLOCKS if b.language not in RUN + SHOWN]
    assert not unknown, f"blocks neither run nor declared shown-only ({SHOWN}): {unknown}"


def test_expect_exit_marks_only_bash_blocks() -> None:
    wrong = [b.name for b in ALL_BLOCKS if b.expect_exit is not None and b.language != "bash"]
    assert not wrong, f"<!-- expect-exit: N --> before a block that does not run: {wrong}"


def test_a_bash_block_with_expect_exit_has_a_command_to_run() -> None:
    empty = [b.name for b in BASH_BLOCKS if b.expect_exit is not None and not command_lines(b)]
    assert not empty, f"<!-- expect-exit: N --> but no dpaudit line runs: {empty}"


# ---- the harness itself -------------------------------------------------------------------


def test_parser_reads_fences_languages_indentation_and_expect_exit(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "text\n\n```python\nx = 1\n```\n\n- item\n\n  ```python\n  y = x + 1\n  ```\n\n"
        "<!-- expect-exit: 2 -->\n```bash\ndpaudit account 'Nope(' \\\n  --json\n"
        "pip install dpaudit\ndpaudit report all --out r\npython -m pytest\n```\n"
        "````text\n```\nnot a fence end\n````\n",
        encoding="utf-8",
    )
    blocks = parse_blocks(doc)
    assert [(b.line, b.language, b.expect_exit) for b in blocks] == [
        (4, "python", None),
        (10, "python", None),
        (15, "bash", 2),
        (22, "text", None),
    ]
    assert blocks[1].code == "y = x + 1\n"
    assert command_lines(blocks[2]) == [(15, "dpaudit account 'Nope(' --json")]
    assert shell_argv("dpaudit account 'Nope(' --json  # a comment")[1:] == [
        "-m",
        "dpaudit",
        "account",
        "Nope(",
        "--json",
    ]
    assert "```" in blocks[3].code
    namespace: dict[str, object] = {}
    for b in blocks[:2]:
        _run_python(b, namespace)
    assert namespace["y"] == 2


def test_file_marker_and_isolated_blocks(tmp_path: Path) -> None:
    """A block marked as a file is saved and importable; in an ISOLATED file a block that
    needs an earlier block's names fails (so the README's blocks each run on their own)."""
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- file: helper_mod.py -->\n```python\nVALUE = 41\n```\n\n"
        "```python\nimport helper_mod\n\nanswer = helper_mod.VALUE + 1\n```\n\n"
        "```python\nprint(answer)\n```\n",
        encoding="utf-8",
    )
    saved, importing, using = parse_blocks(doc)
    assert saved.file == "helper_mod.py" and importing.file is None
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        _run_python(saved, {}, tmp_path)
        assert (tmp_path / "helper_mod.py").read_text(encoding="utf-8") == "VALUE = 41\n"
        fresh: dict[str, object] = {}
        _run_python(importing, fresh, tmp_path)
        assert fresh["answer"] == 42
        with pytest.raises(NameError, match="answer"):
            _run_python(using, {}, tmp_path)  # isolated: the earlier block's name is gone
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("helper_mod", None)
    assert ROOT / "README.md" in ISOLATED


def test_harness_refuses_shell_operators_and_unclosed_fences(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="one plain dpaudit command"):
        shell_argv("dpaudit account 'Laplace(1)' > out.txt")
    with pytest.raises(ValueError, match="one plain dpaudit command"):
        shell_argv("dpaudit demo | head")
    doc = tmp_path / "doc.md"
    doc.write_text("```python\nx = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="never closed"):
        parse_blocks(doc)


def test_a_failing_python_block_points_at_its_markdown_line(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# t\n\n```python\nx = 1\nraise RuntimeError('docs broken')\n```\n", encoding="utf-8"
    )
    (block,) = parse_blocks(doc)
    with pytest.raises(RuntimeError, match="docs broken") as info:
        _run_python(block, {})
    assert info.traceback[-1].path == doc and info.traceback[-1].lineno + 1 == 5
