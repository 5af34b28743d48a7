"""The documentation site cannot drift: its code blocks run or compile, its configs and
scenarios load, its examples are the tested files, and the CLI page is the CLI's own help.

Python blocks run in a temporary directory unless a ``<!-- fragment: why -->`` line precedes
them (a handler body, a test module, names the reader supplies): those are compiled (top-level
``await`` allowed) and their imports resolved. A block that is only ``--8<-- "FILE"`` shows a
file that its own tests run; it is compiled and its imports resolved here.

``ACTORSCOPE_WRITE_DOCS=1 pytest tests/test_docs.py`` rewrites ``docs/reference/cli.md`` and the
generated tables of ``docs/reference/scenario.md`` (the scenario file's keys, from its models).
"""

from __future__ import annotations

import ast
import asyncio
import enum
import importlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import tomllib
import types
import typing
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
import typer.core
import typer.main
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from actorscope.bots import BotConfig, run_bots
from actorscope.cli import main
from actorscope.cli._app import app
from actorscope.http import create_app
from actorscope.permissions import Reason
from actorscope.store import Database
from actorscope.testing.scenario import LoadedScenario
from actorscope.testing.scenario._model import Scenario

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CLI_PAGE = DOCS / "reference" / "cli.md"
SCENARIO_PAGE = DOCS / "reference" / "scenario.md"
FENCE = re.compile(
    r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL
)
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^"]+)"[ \t]*$', re.MULTILINE)
FRAGMENT = re.compile(r"<!-- fragment: [^>]+ -->\n\Z")
#: A bot.toml needs a handler; a TOML block showing sections only is loaded with this one.
SECTION_HANDLER = 'handler = "docs_example:handle"\n'


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced code block of a page, with its ``--8<--`` includes expanded."""

    page: Path
    line: int
    lang: str
    body: str
    fragment: bool
    included: bool

    @property
    def where(self) -> str:
        """``docs/<page>:<line>``, the block's id in test names and failures."""
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _expand(body: str) -> str:
    def include(match: re.Match[str]) -> str:
        return (ROOT / match["path"]).read_text(encoding="utf-8")

    return SNIPPET.sub(include, body)


def _blocks() -> list[Block]:
    blocks: list[Block] = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            body = match["body"]
            blocks.append(
                Block(
                    page=page,
                    line=text.count("\n", 0, match.start()) + 1,
                    lang=match["lang"],
                    body=_expand(body),
                    fragment=FRAGMENT.search(text, 0, match.start()) is not None,
                    included=SNIPPET.fullmatch(body.strip()) is not None,
                )
            )
    return blocks


BLOCKS = _blocks()


def _of(*langs: str) -> list[object]:
    return [pytest.param(b, id=b.where) for b in BLOCKS if b.lang in langs]


def _resolve_imports(tree: ast.AST, where: str) -> None:
    """Every ``import`` of the block names a module, and every ``from`` import a name in it."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = importlib.import_module(node.module)
            for alias in node.names:
                if not hasattr(module, alias.name):
                    importlib.import_module(f"{node.module}.{alias.name}")


def test_the_docs_have_code_blocks_of_each_kind() -> None:
    """The collection below sees python, toml and yaml blocks (a broken FENCE would pass all)."""
    langs = {block.lang for block in BLOCKS}
    assert {"python", "toml", "yaml"} <= langs
    assert any(block.included for block in BLOCKS)
    assert any(not block.fragment and not block.included for block in _python())


def _python() -> list[Block]:
    return [block for block in BLOCKS if block.lang == "python"]


@pytest.mark.parametrize("block", _of("python"))
def test_python_block(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A python block compiles with its imports resolved, and runs unless it is a fragment."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if block.fragment else 0
    code = compile(block.body, block.where, "exec", flags=flags | ast.PyCF_ONLY_AST)
    # A test module of the guides sits beside an example bot: it imports it by its name.
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    _resolve_imports(code, block.where)
    compiled = compile(code, block.where, "exec", flags=flags)
    if block.fragment or block.included:
        return
    monkeypatch.chdir(tmp_path)
    exec(compiled, {"__name__": "docs_example"})  # noqa: S102  # the docs' own example code


@pytest.mark.parametrize("block", _of("toml"))
def test_toml_block(block: Block, tmp_path: Path) -> None:
    """A TOML block parses; one with a bot section or a handler loads as a bot config."""
    document = tomllib.loads(block.body)
    if not {"handler", "telegram", "discord", "http"} & set(document):
        return
    text = block.body if "handler" in document else SECTION_HANDLER + block.body
    path = tmp_path / "bot.toml"
    path.write_text(text, encoding="utf-8")
    config = BotConfig.load(path, require_bots=bool({"telegram", "discord"} & set(document)))
    assert config.handler or config.http is not None


@pytest.mark.parametrize("block", _of("yaml", "yml"))
def test_yaml_block(block: Block, tmp_path: Path) -> None:
    """A YAML block parses; a scenario (it has steps) validates as a scenario file."""
    document = yaml.safe_load(block.body)
    if isinstance(document, dict) and "steps" in document:
        path = tmp_path / "docs.scenario.yaml"
        path.write_text(block.body, encoding="utf-8")
        assert LoadedScenario.load(path).scenario.steps


def _commands(group: typer.core.TyperGroup, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    ctx = typer.Context(group, info_name=" ".join(path))
    found = [path]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, typer.core.TyperGroup):
            found += _commands(command, (*path, name))
        elif command is not None:
            found.append((*path, name))
    return found


def _cli_page(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["--help"]) == 0  # registers every command on the app
    capsys.readouterr()
    root = typer.main.get_command(app)
    assert isinstance(root, typer.core.TyperGroup)
    parts = [
        "# Command line\n",
        "Generated from `actorscope --help` by `tests/test_docs.py`, which fails when this page",
        "and the CLI differ (`ACTORSCOPE_WRITE_DOCS=1 pytest tests/test_docs.py` rewrites it).",
        "Bad input gets one line on stderr and exit status 2; `--db` defaults to",
        "`./actorscope.db`. The rules every command keeps are in the",
        "[design](../design.md#cli-contract).\n",
    ]
    for path in _commands(root, ()):
        assert main([*path, "--help"]) == 0
        help_text = capsys.readouterr().out.rstrip()
        parts += [f"## actorscope {' '.join(path)}".rstrip() + "\n", "```text", help_text, "```\n"]
    return "\n".join(parts)


def test_cli_reference_is_the_cli_help(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/reference/cli.md is every command's --help, as the CLI prints it now."""
    monkeypatch.setenv("COLUMNS", "80")
    page = _cli_page(capsys)
    if os.environ.get("ACTORSCOPE_WRITE_DOCS") == "1":
        CLI_PAGE.write_text(page, encoding="utf-8")
    assert CLI_PAGE.read_text(encoding="utf-8") == page, (
        "docs/reference/cli.md differs from the CLI's help: run "
        "ACTORSCOPE_WRITE_DOCS=1 pytest tests/test_docs.py and commit it"
    )


#: docs/reference/scenario.md is written by hand down to this line; the rest is generated.
SCENARIO_MARK = (
    "<!-- The tables below are generated from the scenario models by tests/test_docs.py. -->\n"
)


def _anchor(heading: str) -> str:
    """The id Python-Markdown's toc gives a heading (its default slugify)."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _key_type(annotation: object, where: str, found: list[tuple[str, type[BaseModel]]]) -> str:
    """A field's type in words; a model is a link to its own table (queued in ``found``)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.append((where, annotation))
        return f"[`{where}`](#{_anchor(where)})"
    if origin is typing.Literal:
        return " \\| ".join(f"`{arg}`" for arg in args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f"`{member.value}`" for member in annotation)
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_key_type(arg, where, found) for arg in args)
    if origin is list:
        return f"list of {_key_type(args[0], f'{where}[]', found)}"
    if origin is dict:
        return f"name → {_key_type(args[1], f'{where}.<name>', found)}"
    words = {str: "text", int: "integer", bool: "`true` \\| `false`", type(None): "`null`"}
    assert annotation in words, f"{where}: no words for {annotation!r}"
    return words[annotation]


#: A Sphinx role in a docstring (:func:`~actorscope.sandbox.platform_sandbox`).
DOC_ROLE = re.compile(r":\w+:`(?P<short>~?)(?P<target>[\w.]+)`")


def _markdown(doc: str) -> str:
    """A model's docstring as one Markdown paragraph: roles and ````code```` as `code`."""
    doc = DOC_ROLE.sub(
        lambda m: f"`{m['target'].rsplit('.', 1)[-1] if m['short'] else m['target']}`", doc
    )
    return " ".join(re.sub(r"``([^`]+)``", r"`\1`", doc).split())


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    if value is None:
        return "not set"
    if isinstance(value, BaseModel):
        return "`{}`"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _scenario_tables() -> str:
    """One table per mapping of a scenario file, by key path, from the top level down."""
    parts: list[str] = []
    queue: list[tuple[str, type[BaseModel]]] = [("top level", Scenario)]
    while queue:
        where, model = queue.pop(0)
        found: list[tuple[str, type[BaseModel]]] = []
        rows = []
        for name, info in model.model_fields.items():
            key = info.alias or name
            path = key if where == "top level" else f"{where}.{key}"
            # A key whose default is null is one to leave out: its type is what it may be.
            kinds = typing.get_args(info.annotation) if info.default is None else ()
            kind = " or ".join(
                _key_type(arg, path, found)
                for arg in [k for k in kinds if k is not type(None)] or [info.annotation]
            )
            for bound in info.metadata:
                if getattr(bound, "ge", None) is not None:
                    kind += f" ≥ {bound.ge}"
                if getattr(bound, "min_length", None) == 1:
                    kind += " (at least one)"
            rows.append([f"`{key}`", kind, _default(info), info.description or ""])
        if not any(row[3] for row in rows):
            rows = [row[:3] for row in rows]
        head = ["Key", "Type", "Default", "What"][: len(rows[0])]
        table = [head, ["---"] * len(head), *rows]
        doc = _markdown(inspect.getdoc(model) or "")
        title = "Top level" if where == "top level" else f"`{where}`"
        parts += [
            f"## {title}\n",
            f"{doc}\n",
            "\n".join(f"| {' | '.join(row)} |" for row in table) + "\n",
        ]
        queue[:0] = found  # depth first: a mapping's own tables follow it
    return "\n".join(parts)


def test_scenario_reference_is_the_schema() -> None:
    """docs/reference/scenario.md's tables are the scenario models' keys, as they are now."""
    hand, mark, _ = SCENARIO_PAGE.read_text(encoding="utf-8").partition(SCENARIO_MARK)
    assert mark, f"docs/reference/scenario.md lost its line {SCENARIO_MARK.strip()}"
    page = f"{hand}{SCENARIO_MARK}\n{_scenario_tables()}"
    if os.environ.get("ACTORSCOPE_WRITE_DOCS") == "1":
        SCENARIO_PAGE.write_text(page, encoding="utf-8")
    assert SCENARIO_PAGE.read_text(encoding="utf-8") == page, (
        "docs/reference/scenario.md differs from the scenario models: run "
        "ACTORSCOPE_WRITE_DOCS=1 pytest tests/test_docs.py and commit it"
    )


def test_readme_starts_with_the_two_commands_and_links_the_docs() -> None:
    """README.md starts with exactly `make demo` and `make test`, and points to the docs."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("```sh\nmake demo\nmake test\n```\n")
    assert "docs/" in readme
    assert "make docs" in readme


DOTTED = re.compile(r"`(?P<name>actorscope(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def _exists(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or a name that a module has (``module.Name``)."""
    module, _, name = dotted.rpartition(".")
    for candidate, attribute in ((dotted, ""), (module, name)):
        try:
            found = importlib.import_module(candidate)
        except ImportError:
            continue
        return not attribute or hasattr(found, attribute)
    return False


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda p: str(p.relative_to(DOCS)))
def test_dotted_names_in_the_docs_exist(page: Path) -> None:
    """Every `actorscope.x.y` the prose names is a module or a public name of one."""
    names = {m["name"] for m in DOTTED.finditer(page.read_text(encoding="utf-8"))}
    missing = sorted(name for name in names if not _exists(name))
    assert not missing, f"{page.relative_to(ROOT)} names what does not exist: {missing}"


@pytest.mark.parametrize("page", ["design.md", "concepts.md"])
def test_every_reason_is_documented(page: str) -> None:
    """The decision order on the page names every Reason value (a new reason is documented)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    missing = [reason.value for reason in Reason if f"`{reason.value}`" not in text]
    assert not missing, f"docs/{page} does not name {missing}"


def test_the_reference_shows_sphinx_roles_as_code() -> None:
    """docs/griffe_roles.py turns :class:`~a.B` into `B` and :func:`a.f` into `a.f`."""
    spec = importlib.util.spec_from_file_location("griffe_roles", DOCS / "griffe_roles.py")
    assert spec is not None
    assert spec.loader is not None
    roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roles)
    text = "see :class:`~actorscope.host.RunStep` and :func:`actorscope.identity.is_group_scope`"
    assert roles.without_roles(text) == "see `RunStep` and `actorscope.identity.is_group_scope`"


#: ``GET /v1/...`` or ``GET|POST /v1/...`` in the HTTP guide, the path up to ``?`` or a space.
HTTP_ROUTE = re.compile(
    r"`(?P<methods>(?:GET|POST|DELETE)(?:\|(?:GET|POST|DELETE))*) (?P<path>/v1/[^`?\s]*)"
)


async def test_the_http_guide_names_real_routes(tmp_path: Path) -> None:
    """Every `METHOD /v1/...` of the HTTP guide is a route of create_app's OpenAPI document."""
    text = (DOCS / "guides" / "http.md").read_text(encoding="utf-8")
    routes = [(m["methods"].split("|"), m["path"]) for m in HTTP_ROUTE.finditer(text)]
    assert len(routes) >= 6
    async with Database.open(tmp_path / "http.db") as db:
        paths = create_app(db).openapi()["paths"]
    missing = [
        f"{method} {path}"
        for methods, path in routes
        for method in methods
        if method.lower() not in paths.get(path, {})
    ]
    assert not missing, f"docs/guides/http.md names routes the API does not have: {missing}"


#: A sandbox session a page shows: typed lines (starting with ``/``) and what the prompt printed.
SESSION = re.compile(
    r"<!-- run by tests/test_docs\.py[^\n]*\n```text\n(?P<body>.*?)^```", re.M | re.S
)
Lines = AsyncIterator[str]
Out = Callable[[str], None]


def _run_notes_bot(tmp_path: Path, lines: Lines, out: Out) -> list[str]:
    """``actorscope run bot.toml --sandbox`` beside the notes bot; what it prints after."""
    for name in ("bot.toml", "telegram_bot.py"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    config = BotConfig.load(tmp_path / "bot.toml")

    async def run() -> None:
        async with asyncio.timeout(60):
            await run_bots(config, sandbox=True, env={}, out=out, lines=lines, handle_signals=False)

    asyncio.run(run())
    return ["stopping", "stopped"]


def _run_ptb_notes_bot(tmp_path: Path, lines: Lines, out: Out) -> list[str]:
    """``python examples/ptb_notes_bot.py --sandbox``; what it prints after the session."""
    from actorscope.integrations.ptb import run_sandbox

    example = importlib.import_module("ptb_notes_bot")
    assert run_sandbox(example.build_application, lines=lines, out=out) == 0
    return []


def _run_aiogram_notes_bot(tmp_path: Path, lines: Lines, out: Out) -> list[str]:
    """``python examples/aiogram_notes_bot.py --sandbox``; what it prints after the session."""
    from actorscope.integrations.aiogram import run_sandbox

    example = importlib.import_module("aiogram_notes_bot")
    assert run_sandbox(example.build_dispatcher, lines=lines, out=out) == 0
    return []


#: Each page with a session, and how its reader runs the sandbox it types into.
SESSIONS: dict[str, Callable[[Path, Lines, Out], list[str]]] = {
    "getting-started.md": _run_notes_bot,
    "guides/ptb.md": _run_ptb_notes_bot,
    "guides/aiogram.md": _run_aiogram_notes_bot,
}


def test_the_sessions_are_found() -> None:
    """Exactly the pages of SESSIONS show a session (a broken SESSION pattern would pass all)."""
    pages = {
        str(page.relative_to(DOCS))
        for page in DOCS.rglob("*.md")
        if SESSION.search(page.read_text(encoding="utf-8"))
    }
    assert pages == set(SESSIONS)


@pytest.mark.parametrize("page", sorted(SESSIONS))
def test_a_sandbox_session_is_what_the_sandbox_prints(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's sandbox session, typed into its bot on a new database, prints exactly the
    page's lines (message numbers included) in the page's order."""
    (found,) = SESSION.finditer((DOCS / page).read_text(encoding="utf-8"))
    expected = found["body"].splitlines()
    typed = [line for line in expected if line.startswith("/")]
    assert len(typed) >= 3
    monkeypatch.chdir(tmp_path)  # where the examples make their database and workspace
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    printed: list[str] = []

    async def lines() -> AsyncIterator[str]:
        # The prompt asks for a line once the previous one is answered: the typed line goes
        # into the transcript where a terminal would echo it.
        for line in typed:
            printed.append(line)
            yield line + "\n"

    after = SESSIONS[page](tmp_path, lines(), printed.append)
    assert printed[printed.index(typed[0]) :] == [*expected, *after]
