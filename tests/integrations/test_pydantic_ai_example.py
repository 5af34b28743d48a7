"""examples/pydantic_ai_bot.py runs offline in a subprocess and tells the story it promises."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from tests._process import run_process

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALICE = "700000001"  # the sandbox's first user
# Alice (admin of @devs) makes herself the first writer, then asks; Bob asks and forges Alice;
# an anonymous admin asks (ignored: no person behind it).
SCRIPT = f"""\
/as alice @devs hello
/reply 4 /addwriter
/as alice @devs /ask write notes.md buy milk
/as bob @devs /ask write notes.md hack
/as bob @devs /forge {ALICE} overwrite
/anon @devs /ask write notes.md anon
/quit
"""
# Nothing in the environment may switch the example to a real model or a real bot.
_DROPPED = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ACTORSCOPE_MODEL")


async def run_example(folder: Path, stdin: str) -> tuple[int, str, str]:
    """Run the example in ``folder`` with ``stdin`` as its whole input (60 s at most)."""
    return await run_process(
        [sys.executable, "pydantic_ai_bot.py"], folder, stdin, seconds=60.0, drop_env=_DROPPED
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The example and its configuration in a fresh folder (its database and files go there)."""
    target = tmp_path / "example"
    target.mkdir()
    for name in ("pydantic_ai_bot.py", "pydantic_ai_bot.toml"):
        shutil.copy(EXAMPLES / name, target / name)
    return target


async def test_example_allows_the_writer_denies_the_rest_offline(folder: Path) -> None:
    """Writer saved, non-writer told no_grant, forged origin synthetic, anonymous admin ignored."""
    code, out, err = await run_example(folder, SCRIPT)
    assert code == 0, err
    replies = [line.split("] ", 1)[1] for line in out.splitlines() if line.startswith("[bot ->")]
    assert sorted(replies) == sorted(
        [
            f"added @alice ({ALICE}) as a writer",
            "notes.md: saved to notes.md",
            "notes.md: not saved: no_grant",
            "forged origin ignored (ran as subagent:forged): not saved: synthetic_sender",
        ]
    )
    assert "ignored by the bot: nonperson_sender" in out
    (notes,) = (folder / "workspace").rglob("notes.md")
    assert notes.read_text() == f"- buy milk (by {ALICE})\n"


async def test_example_usage_errors_are_replies(folder: Path) -> None:
    """/ask and /forge without their text answer with a usage line."""
    script = "/as alice @devs /ask\n/as alice @devs /forge 1\n/quit\n"
    code, out, err = await run_example(folder, script)
    assert code == 0, err
    assert "usage: /ask write notes.md <text>" in out
    assert "usage: /forge <sender id> <text>" in out
