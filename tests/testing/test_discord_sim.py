"""The Discord simulator: the production runner over the Discord emulator, replies, REST calls."""

from __future__ import annotations

import logging

import discord
import pytest
from tests._wiring import channel_pipeline

from actorscope.channels import ChannelConfig, IgnoreReason, Outcome
from actorscope.channels.discord._runner import DiscordRunner
from actorscope.identity import SenderKind
from actorscope.testing import AgentEnv, DiscordSim, Grants, Turn
from actorscope.testing._expect import ExpectationError


def writer_bot(sim: DiscordSim) -> None:
    """A bot that checks file_writer and replies with the decision."""

    @sim.handler
    async def bot(turn: Turn) -> None:
        decision = await turn.check("file_writer")
        await turn.reply(f"{'ok' if decision.allowed else 'no'}: {decision.reason}")


async def test_thread_message_scope_is_per_member_and_reply_lands_in_the_thread(
    discord_sim: DiscordSim, actorscope_grants: Grants
) -> None:
    """A guild writer in a thread: member scope, thread session key, reply sent to the thread."""
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    design = discord_sim.thread(general, "design")
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)
    writer_bot(discord_sim)
    discord_sim.should_allow("file_writer", reason="granted", sender=carol)
    discord_sim.should_send(text="ok: granted", chat=general, topic=design)
    event = await discord_sim.message(carol, "write", design)
    assert event.request is not None
    assert event.request.user_id == f"guild:{lab.id}:user:{carol.id}"
    assert event.request.chat_id == str(general.id)
    assert event.request.session_key.endswith(f":thread:{design.id}")
    assert discord_sim.http_calls[-1].method == "POST"
    assert discord_sim.http_calls[-1].path == f"/channels/{design.id}/messages"


async def test_slash_command_actor_is_the_invoking_user(discord_sim: DiscordSim) -> None:
    """A slash command by a non-writer is denied for that user; the interaction is answered."""
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    writer_bot(discord_sim)
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="no: no_grant", chat=general)
    event = await discord_sim.slash(dave, "write", general, options={"file": "a.md"})
    assert event.message is not None
    assert event.message.content == "/write file=a.md"
    assert event.message.sender_id == str(dave.id)
    # As in production: deferred at once (type 5), the handler's reply is the follow-up.
    deferral, follow_up = discord_sim.http_calls[-2:]
    assert deferral.path.endswith("/callback")
    assert deferral.json is not None
    assert deferral.json.get("type") == 5
    assert follow_up.path.startswith("/webhooks/")
    assert follow_up.json == {"content": "no: no_grant", "tts": False}


async def test_dm_and_dm_slash_are_direct_contexts(discord_sim: DiscordSim) -> None:
    """A DM and a slash command in a DM are the sender's own scope."""
    dave = discord_sim.user("dave")
    writer_bot(discord_sim)
    discord_sim.should_allow(reason="not_group_context")
    discord_sim.should_send(text="ok: not_group_context")
    dm = await discord_sim.dm(dave, "hello")
    slash = await discord_sim.slash(dave, "write")
    assert dm.identity is not None
    assert slash.identity is not None
    assert dm.identity.user_id == slash.identity.user_id == str(dave.id)


async def test_webhooks_and_bots_are_ignored(discord_sim: DiscordSim) -> None:
    """Webhook posts and other bots' messages never reach the bot by default."""
    carol = discord_sim.user("carol")
    other = discord_sim.user("otherbot", bot=True)
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    hook = await discord_sim.webhook(general, "deployed")
    beep = await discord_sim.bot_message(other, "beep", general)
    assert (hook.ignored, beep.ignored) == (IgnoreReason.NONPERSON_SENDER, IgnoreReason.BOT_SENDER)


async def test_webhook_opted_in_is_denied_with_empty_sender(
    discord_sim: DiscordSim, actorscope_grants: Grants
) -> None:
    """With ignore_bots off a webhook reaches the bot, and is denied every group permission."""
    discord_sim.config = discord_sim.config.model_copy(update={"ignore_bots": False})
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    await actorscope_grants.allow(f"guild:{lab.id}:*", "*")
    writer_bot(discord_sim)
    discord_sim.should_deny(reason="empty_sender")
    discord_sim.should_send(text="no: empty_sender", chat=general)
    event = await discord_sim.webhook(general, "overwrite it")
    assert event.identity is not None
    assert event.identity.sender_kind is SenderKind.WEBHOOK


async def test_discord_expectation_failure_names_the_event(discord_sim: DiscordSim) -> None:
    """A wrong reply expectation fails with the Discord event's label and the text diff."""
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    writer_bot(discord_sim)
    discord_sim.should_deny()
    discord_sim.should_send(text="yes")
    with pytest.raises(ExpectationError) as failure:
        await discord_sim.message(carol, "write", general)
    assert "step 1 (discord message by carol in #general)" in str(failure.value)
    assert "text: expected 'yes', got 'no: no_grant'" in str(failure.value)


async def test_subagent_announce_in_a_guild_is_judged_for_the_member(
    discord_sim: DiscordSim, actorscope_grants: Grants
) -> None:
    """A sub-agent announce from a guild member's run is checked for that member."""
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)
    asked = await discord_sim.message(dave, "write", general)
    writer_bot(discord_sim)
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="no: no_grant", chat=general)
    event = await discord_sim.subagent_announce(asked)
    assert event.request is not None
    assert event.request.user_id == f"guild:{lab.id}:user:{dave.id}"


async def test_runner_and_simulator_log_no_voice_warnings(
    actorscope_env: AgentEnv, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """discord.py's "voice will NOT be supported" warnings are filtered; others still show."""
    # As in a fresh process: discord.py warns once, at the first client it makes.
    monkeypatch.setattr(discord.VoiceClient, "warn_nacl", True)
    monkeypatch.setattr(discord.VoiceClient, "warn_dave", True)
    caplog.set_level(logging.WARNING)
    DiscordRunner(
        channel_pipeline(actorscope_env.db, ChannelConfig(platform="discord")),
        token="unused",  # noqa: S106 - never logs in
    )
    monkeypatch.setattr(discord.VoiceClient, "warn_nacl", True)
    monkeypatch.setattr(discord.VoiceClient, "warn_dave", True)
    async with DiscordSim(actorscope_env):
        pass
    logging.getLogger("discord.client").warning("something else")
    assert [r.getMessage() for r in caplog.records] == ["something else"]


async def test_bang_writers_is_answered_by_the_runner_never_the_handler(
    discord_sim: DiscordSim,
) -> None:
    """As in production, ``!writers`` is answered by the pipeline; the bot never runs it."""
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    turns: list[str] = []

    @discord_sim.handler
    async def bot(turn: Turn) -> None:
        turns.append(turn.text)

    discord_sim.should_send(text="no writers yet: a group admin may add the first one")
    event = await discord_sim.message(carol, "!writers", general)
    assert event.outcome is Outcome.WRITER_COMMAND
    assert event.request is None
    assert turns == []
