"""docs/concepts.md "Two accounts in the sandbox", typed at the prompt of
``actorscope run examples/memo_bot.toml --sandbox``: the bot answers each line as shown."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

from tests._wait import wait_until

from actorscope.bots import BotConfig, run_bots

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"\b[A-Z0-9]{5}-[A-Z0-9]{5}\b")
_BOT = re.compile(r"^\[bot -> ([^\]]*?)(?: msg \d+)?\] (.*)$")


def walkthrough() -> list[tuple[str, list[str]]]:
    """Each line typed in the walkthrough, with the bot's answers the guide shows after it."""
    guide = (ROOT / "docs" / "concepts.md").read_text(encoding="utf-8")
    section = guide.split("### Two accounts in the sandbox", 1)[1]
    block = section.split("```text\n", 1)[1].split("\n```", 1)[0]
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("  "):  # an answer wrapped onto the next line
            steps[-1][1][-1] += " " + line.strip()
        elif line.startswith("[bot -> "):
            steps[-1][1].append(line)
        else:
            steps.append((line, []))
    return steps


def answers(printed: list[str]) -> list[str]:
    """The bot's answers among ``printed``, as the guide shows them (no message id)."""
    return [f"[bot -> {m.group(1)}] {m.group(2)}" for x in printed if (m := _BOT.match(x))]


def same(answer: str) -> str:
    """An answer without what changes from run to run: the code, the person, the time."""
    answer = CODE.sub("CODE", answer)
    answer = re.sub(r"person:[0-9a-f-]{36}", "person:UUID", answer)
    return re.sub(r"until \d\d:\d\d UTC", "until HH:MM UTC", answer)


async def test_the_concepts_walkthrough_runs_as_written(tmp_path: Path) -> None:
    """Each line of the two-account walkthrough gets the answers concepts.md shows."""
    for name in ("memo_bot.py", "memo_bot.toml"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    printed: list[str] = []
    typed: asyncio.Queue[str | None] = asyncio.Queue()

    async def lines() -> AsyncIterator[str]:
        while (line := await typed.get()) is not None:
            yield line + "\n"

    config = BotConfig.load(tmp_path / "memo_bot.toml")
    running = asyncio.create_task(
        run_bots(config, sandbox=True, out=printed.append, lines=lines(), handle_signals=False)
    )
    steps = walkthrough()
    assert len(steps) > 10
    code = ""
    try:
        await wait_until(lambda: any("discord bot:" in x for x in printed), 10)
        for line, expected in steps:
            start = len(printed)
            await typed.put(CODE.sub(code, line) if code else line)

            def answered(start: int = start, count: int = len(expected)) -> bool:
                return len(printed) > start and len(answers(printed[start:])) >= count

            await wait_until(answered, 10)
            got = answers(printed[start:])
            assert [same(x) for x in got] == [same(x) for x in expected], line
            for found in got:
                if issued := re.search(r"your link code is (\S+)", found):
                    code = issued.group(1)
    finally:
        await typed.put(None)
        await asyncio.wait_for(running, 10)
