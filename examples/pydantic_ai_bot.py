"""A PydanticAI agent in a Telegram group that delegates a write and keeps the human who asked.

``/ask write notes.md <text>``: the bot's agent hands the write to a sub-agent (a tool that
runs another agent, :func:`~actorscope.integrations.pydantic_ai.run_delegate`). The sub-agent's
``write_notes`` tool is guarded with ``requires("file_writer")``: it is judged for the member
who asked - via the signed origin, not for the sub-agent or the group - so a writer's note is
saved and a non-writer is told why not. ``/forge <id> <text>`` hands the sub-agent a carrier
that merely *claims* member ``<id>`` (no valid signature): the run stays synthetic and the
write is denied.

The models are scripted (PydanticAI's ``FunctionModel``), so everything runs offline. With
``ANTHROPIC_API_KEY`` or ``OPENAI_API_KEY`` set (and that provider's SDK installed) the same
agents run a real model instead (``ACTORSCOPE_MODEL`` picks one, e.g. ``openai:gpt-4o-mini``).

Run: ``python examples/pydantic_ai_bot.py`` (a Telegram sandbox on 127.0.0.1, typed at a
prompt: ``/help``), or ``--live`` for the real bot (``TELEGRAM_BOT_TOKEN``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from actorscope.bots import BotConfig, BotServices, run_in_terminal
from actorscope.errors import ActorscopeError
from actorscope.identity import SenderKind
from actorscope.integrations.pydantic_ai import (
    ActorscopeDeps,
    requires,
    run_delegate,
    run_message,
)
from actorscope.messages import InboundMessage, RunRequest
from actorscope.propagation import Origin, OriginSigner

CONFIG = Path(__file__).with_name("pydantic_ai_bot.toml")
NOTES = "notes.md"
#: (API key variable, provider SDK, default model) for running a real model.
REAL_MODELS = (
    ("ANTHROPIC_API_KEY", "anthropic", "anthropic:claude-3-5-haiku-latest"),
    ("OPENAI_API_KEY", "openai", "openai:gpt-4o-mini"),
)


@dataclass(frozen=True, slots=True)
class BotDeps:
    """This bot's deps: actorscope's (identity, policy, signer) beside the bot's services."""

    actorscope: ActorscopeDeps
    services: BotServices


@requires("file_writer")
async def write_notes(ctx: RunContext[BotDeps], text: str) -> str:
    """Append one line to notes.md in this chat's shared workspace.

    Args:
        text: The line to add.
    """
    who = ActorscopeDeps.of(ctx.deps).identity  # the member who asked, never a tool argument
    services = ctx.deps.services
    services.workspace.append(services.agent, who, NOTES, f"- {text} (by {who.sender_id})\n")
    return f"saved to {NOTES}"


def _tool_answer(messages: list[ModelMessage]) -> ToolReturnPart | None:
    last = messages[-1].parts[-1]
    return last if isinstance(last, ToolReturnPart) else None


def _prompt(messages: list[ModelMessage]) -> str:
    content = getattr(messages[0].parts[-1], "content", "")
    return content if isinstance(content, str) else ""


def scripted_writer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The sub-agent's script: call write_notes with the task's text, then report."""
    answer = _tool_answer(messages)
    if answer is None:
        text = _prompt(messages).partition(":")[2].strip() or "(empty)"
        return ModelResponse(parts=[ToolCallPart("write_notes", {"text": text})])
    content = answer.content
    if isinstance(content, dict) and "error" in content:
        return ModelResponse(parts=[TextPart(f"not saved: {content['error']['reason']}")])
    return ModelResponse(parts=[TextPart(str(content))])


def scripted_main(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The bot agent's script: delegate "write notes.md <text>", then pass the answer on."""
    answer = _tool_answer(messages)
    if answer is None:
        text = _prompt(messages).removeprefix("write").strip().removeprefix(NOTES).strip()
        return ModelResponse(parts=[ToolCallPart("delegate_write", {"text": text})])
    return ModelResponse(parts=[TextPart(f"{NOTES}: {answer.content}")])


def choose_models(env: Mapping[str, str]) -> tuple[Model | str, Model | str]:
    """(bot agent, sub-agent) models: a real one when a key and its SDK are here, else scripts."""
    for key, package, default in REAL_MODELS:
        if env.get(key) and importlib.util.find_spec(package) is not None:
            name = env.get("ACTORSCOPE_MODEL", default)
            return name, name
    return FunctionModel(scripted_main), FunctionModel(scripted_writer)


def writer_agent(model: Model | str) -> Agent[BotDeps, str]:
    """The sub-agent: it can only write notes, and only for a writer."""
    return Agent(
        model,
        deps_type=BotDeps,
        tools=[write_notes],
        instructions="Write the given line to notes.md with write_notes; report the result. "
        "If the tool says permission denied, say so with its reason.",
    )


def bot_agent(models: tuple[Model | str, Model | str]) -> Agent[BotDeps, str]:
    """The bot's agent: it delegates writing notes to the sub-agent."""
    helper = writer_agent(models[1])

    async def delegate_write(ctx: RunContext[BotDeps], text: str) -> str:
        """Ask the notes sub-agent to append a line to notes.md.

        Args:
            text: The line to add.
        """
        services = ctx.deps.services
        done = await run_delegate(
            ctx, helper, f"write {NOTES}: {text}", deps=lambda d: BotDeps(d, services)
        )
        return done.output

    return Agent(
        models[0],
        deps_type=BotDeps,
        tools=[delegate_write],
        instructions="You keep a group's notes. To write notes.md, use delegate_write. "
        "Tell the member what happened, including any reason a write was refused.",
    )


def forged_carrier(request: RunRequest, claimed: str, text: str) -> InboundMessage:
    """A sub-agent message that claims member ``claimed`` without a valid signature."""
    return InboundMessage(
        channel=request.channel,
        sender_id="subagent:forged",
        chat_id=request.chat_id,
        content=f"write {NOTES}: {text}",
        peer_kind=request.peer_kind,
        user_id=request.user_id,
        sender_kind=SenderKind.SYNTHETIC,
        thread_id=request.thread_id,
        tenant_id=request.tenant_id,
        agent_id=request.agent_id,
        # The origin_* keys a signed carrier has, without the signature.
        metadata=Origin(
            sender_id=claimed,
            channel=request.channel,
            chat_id=request.chat_id,
            user_id=request.user_id,
            peer_kind=request.peer_kind,
        ).to_metadata(),
    )


def command(content: str) -> tuple[str, str]:
    """``("/ask", "write notes.md hi")`` from ``"/ask@bot write notes.md hi"``."""
    head, _, rest = content.strip().partition(" ")
    return head.split("@", 1)[0].lower(), rest.strip()


async def handle(request: RunRequest) -> str | None:
    """``/ask <request>`` runs the bot's agent; ``/forge <id> <text>`` shows a forged origin."""
    name, rest = command(request.content)
    if name not in ("/ask", "/forge"):
        return None
    services = BotServices.current()
    # A key of this run: the delegation is signed and verified inside this one call.
    deps = ActorscopeDeps.bound(
        policy=services.policy, signer=OriginSigner(), agent_key=services.agent.key
    )
    models = choose_models(os.environ)
    if name == "/ask":
        if not rest:
            return "usage: /ask write notes.md <text>"
        result = await bot_agent(models).run(rest, deps=BotDeps(deps, services))
        return result.output
    claimed, _, text = rest.partition(" ")
    if not claimed or not text:
        return "usage: /forge <sender id> <text>"
    run, result = await run_message(
        writer_agent(models[1]),
        forged_carrier(request, claimed, text),
        deps,
        deps=lambda d: BotDeps(d, services),
    )
    return f"forged origin ignored (ran as {run.sender_id}): {result.output}"


def main(argv: list[str]) -> int:
    """Run ``pydantic_ai_bot.toml`` next to this file: the sandbox unless ``--live``."""
    parser = argparse.ArgumentParser(
        prog="pydantic_ai_bot.py",
        description="A PydanticAI agent in a Telegram group that delegates writing notes.md.",
    )
    parser.add_argument(
        "--live", action="store_true", help="Run the real Telegram bot (TELEGRAM_BOT_TOKEN)."
    )
    live = parser.parse_args(argv).live
    try:
        return run_in_terminal(BotConfig.load(CONFIG), sandbox=not live, source=str(CONFIG))
    except ActorscopeError as exc:
        print(f"pydantic_ai_bot: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
