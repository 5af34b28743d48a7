"""``actorscope schema lint FILE --target T``: one line per violation, exit 1 if any;
``actorscope schema config``: the JSON Schema of ``bot.toml``."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from actorscope._input import parse_json, read_text_file
from actorscope._text import escape_unstorable
from actorscope.cli._catalog import tools_from_json
from actorscope.cli._lint import lint_tool_schema
from actorscope.errors import SchemaError

__all__ = ["LintTarget", "config_schema", "lint"]

schema_app = typer.Typer(help="Tool input schemas; the bot.toml schema.", add_completion=False)


class LintTarget(StrEnum):
    """The clients a schema can be linted for."""

    CLAUDE = "claude"
    OPENAI_STRICT = "openai-strict"
    GEMINI = "gemini"


@schema_app.command("lint")
def lint(
    file: Annotated[
        Path, typer.Argument(help="A tools/list result (JSON) or a list of tools.", metavar="FILE")
    ],
    target: Annotated[
        LintTarget,
        typer.Option(
            "--target", help="The client to lint for.", metavar="claude|openai-strict|gemini"
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object: tools, target, violations.")
    ] = False,
) -> None:
    """Lint every tool's input schema; print one line per violation and exit 1 if any."""
    document = parse_json(read_text_file(file, SchemaError), str(file), SchemaError)
    tools = tools_from_json(document)
    # JSON may spell lone surrogates (\ud800), which stdout cannot encode.
    violations = [
        {"tool": escape_unstorable(tool.name), "violation": escape_unstorable(str(violation))}
        for tool in tools
        for violation in lint_tool_schema(tool.input_schema, target.value)
    ]
    if as_json:
        summary = {"tools": len(tools), "target": target.value, "violations": violations}
        typer.echo(json.dumps(summary))
    elif violations:
        for row in violations:
            typer.echo(f"{row['tool']}: {row['violation']}")
    else:
        typer.echo(f"ok: {len(tools)} tool(s) clean for {target.value}")
    if violations:
        raise typer.Exit(1)


@schema_app.command("config")
def config_schema() -> None:
    """Print the JSON Schema of bot.toml (actorscope run / serve / probe) as one JSON object."""
    # Imported here: the configuration model loads the channel modules, which `--help` must not.
    from actorscope.bots import BotConfig

    typer.echo(json.dumps(BotConfig.for_platforms().model_json_schema(), indent=2, sort_keys=True))
