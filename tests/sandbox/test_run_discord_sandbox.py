"""``actorscope run bot.toml --sandbox`` with ``[discord]`` enabled: guild members at the prompt."""

from __future__ import annotations

import re
from pathlib import Path

from tests._process import run_process
from tests.channels.test_run_examples import CONSOLE_SCRIPT, copy_examples

# carol (no writer) is denied; bob (no Manage Server) may not add writers; dave (Manage
# Server) adds the first writer, carol, with !addwriter; carol, a writer now, adds bob with
# /addwriter; then both notes are saved (a webhook's is ignored). /telegram LINE reaches
# Telegram on the same prompt in between.
SCRIPT = """\
/discord
/as carol @general @bot /note too early
/as bob @general
/slash addwriter user:bob
/as dave @general @bot !addwriter @carol
/telegram /as alice @devs hello
/as carol @general
/slash addwriter user:bob
@bot /note from carol
/as bob @general#design @bot /note from bob in the thread
/webhook ci @bot /note from a webhook
/quit
"""


def masked(output: str) -> list[str]:
    """The output's lines with message ids and user ids replaced by N."""
    return [re.sub(r"\d{6,}", "N", line) for line in output.splitlines()]


async def test_run_sandbox_types_as_guild_members_and_the_writer_gate_works(
    tmp_path: Path,
) -> None:
    """A non-writer's note is denied, a Manage Server member adds writers, their notes save."""
    folder = copy_examples(tmp_path / "bot")
    config = folder / "bot.toml"
    text = config.read_text()
    assert "enabled = false" in text
    config.write_text(text.replace("enabled = false", "enabled = true"))
    status, out, err = await run_process(
        [str(CONSOLE_SCRIPT), "run", "bot.toml", "--sandbox"], folder, SCRIPT
    )
    assert (status, err) == (0, ""), out
    lines = masked(out)
    for expected in (
        "[bot -> #general msg N] denied: no_grant",
        "[bot -> #general msg N] added @carol (N) as a writer",
        "[bot -> #general msg N] added @bob (N) as a writer",
        "[bot -> #general msg N] saved",
        "[bot -> #design msg N] saved",
        "  <- discord event N ignored by the bot: nonperson_sender",
        "  -> update 1: message (message 4)",
        "now typing on discord (use /as to say who you are)",
    ):
        assert expected in lines, out
    assert any(x.startswith("[bot -> #general msg N] refused (not_authorized)") for x in lines)
    assert lines[-2:] == ["stopping", "stopped"]
    # A guild member's scope is their own within the guild (the grant covers the guild).
    notes = (folder / "workspace" / "tenants").glob("*/agents/notes/*/notes.md")
    saved = {path.parent.name: path.read_text() for path in notes}
    assert sorted(re.sub(r"\d{6,}", "N", scope) for scope in saved) == [
        "guild%3AN%3Auser%3AN",
        "guild%3AN%3Auser%3AN",
    ]
    texts = sorted(text.split(" (by ")[0] for text in saved.values())
    assert texts == ["- from bob in the thread", "- from carol"]
