"""Links in the PTB and aiogram gates (issue 34): ``install(links=...)`` answers ``/link`` as
``actorscope run`` and the kit do, and a linked account's DMs reach the bot's handlers in
its person's scope."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aiogram import Dispatcher
from aiogram.types import Message as AiogramMessage
from telegram import Update
from telegram.ext import ContextTypes, MessageHandler, filters

from actorscope.context import current_identity
from actorscope.errors import ConfigError
from actorscope.integrations import aiogram as aiogram_gate
from actorscope.integrations import ptb
from actorscope.testing import Event, TelegramSim

CODE = re.compile(r"your link code is ([A-Z0-9]{5}-[A-Z0-9]{5})")


def texts(event: Event) -> list[str]:
    """What the bot sent for one event."""
    return [seen.fields["text"] for seen in event.sent]


async def _scope_reply(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    scope = ptb.identity(update, context).user_id
    await update.effective_message.reply_text(f"scope {scope}")


async def _walk(sim: TelegramSim) -> None:
    """Ann asks for a code, Bob's account (the same human) sends it: both DMs are one scope;
    the bot's own handler never sees /link, and no code is given in a group."""
    sim.user("ann")
    sim.user("bob")
    team = sim.supergroup("team")
    (answer,) = texts(await sim.message("ann", "/link"))
    found = CODE.search(answer)
    assert found is not None, answer
    (linked,) = texts(await sim.message("bob", f"/link {found.group(1)}"))
    assert linked.startswith(f"linked: telegram:{sim.user('bob').id}")
    (on_ann,) = texts(await sim.message("ann", "where"))
    (on_bob,) = texts(await sim.message("bob", "where"))
    assert on_ann == on_bob
    assert on_ann.startswith("scope person:")
    (in_group,) = texts(await sim.message("ann", "/link", team))
    assert in_group.startswith("refused (group_context)")


@pytest.mark.parametrize("links", ["dm"])
async def test_ptb_gate_answers_link_and_scopes_the_person(
    telegram_sim: TelegramSim, links: str
) -> None:
    """install(links="dm") on a PTB application: /link answered by the gate, DMs in the
    person's scope."""
    app = telegram_sim.application_builder().build()
    ptb.install(app, database=":memory:", links=links)
    app.add_handler(MessageHandler(filters.ALL, _scope_reply))
    assert await telegram_sim.serve_application(app) is not None
    await _walk(telegram_sim)


async def test_aiogram_gate_answers_link_and_scopes_the_person(telegram_sim: TelegramSim) -> None:
    """install(dp, links="dm") on an aiogram dispatcher: the same walk as PTB's."""
    dp = Dispatcher()
    aiogram_gate.install(dp, database=":memory:", links="dm")

    @dp.message()
    async def scope(message: AiogramMessage, **_: Any) -> None:
        bound = current_identity()
        assert bound is not None
        await message.answer(f"scope {bound.user_id}")

    await telegram_sim.serve_dispatcher(dp)
    await _walk(telegram_sim)


def test_a_bad_links_mode_is_one_clear_error() -> None:
    """links takes off, dm or grants only."""
    app_dp = Dispatcher()
    with pytest.raises(ConfigError, match="links must be one of 'off', 'dm', 'grants'"):
        aiogram_gate.install(app_dp, database=":memory:", links="all")
