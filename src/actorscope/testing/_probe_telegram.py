"""Telegram's probe world: the events of its probe (the ~40 of a Telegram chat) and how a bot
is served and probed on :class:`~actorscope.testing.TelegramSim`.

Its contract names it (``probe_world``): an ``actorscope run`` handler is probed in a
supergroup and a forum topic (:data:`EVENTS`: a non-writer, another group's writer, an
anonymous admin, a post as a channel, a channel post, an automatic forward, another bot, a
click, an edit, text naming the writer's id, runs started by a non-writer, forged / unsigned /
replayed origins, look-alike ids, the writer's DM), with the agent's links on also
:data:`LINK_EVENTS` (after proving that the writer's own link works); a python-telegram-bot
application (:mod:`._probe_ptb`) or an aiogram dispatcher (:mod:`._probe_aiogram`) is served
there as it is (:data:`PROBE`'s targets). A leak a scenario step can replay is written as a
scenario file (:func:`_scenario`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from actorscope.channels import ChannelConfig
from actorscope.context import bind_identity
from actorscope.errors import NotFoundError
from actorscope.host import Handler
from actorscope.identity import (
    ANONYMOUS_ADMIN_ID,
    CHANNEL_BOT_ID,
    SERVICE_ID,
    Identity,
    PeerKind,
    SenderKind,
)
from actorscope.messages import InboundMessage
from actorscope.permissions import AuditAction, LinkMode, Reason
from actorscope.propagation import (
    Origin,
    OriginSigner,
    RunInfo,
    TickerJob,
    delegate,
    spawn_subagent,
)
from actorscope.sandbox import BotApiCall
from actorscope.testing._harness import AgentEnv, SimulatedEvent
from actorscope.testing._probe import (
    PEOPLE,
    ProbeCase,
    ProbeEvent,
    ProbeRun,
    ProbeTarget,
    ProbeWorld,
    Send,
    conclude,
    folder_watch,
    group_names,
    is_writer_command,
    of_agent,
    plant,
    play,
    seed_writers,
    sent_text,
)
from actorscope.testing._probe_aiogram import AIOGRAM
from actorscope.testing._probe_effects import CallLog, Watch, api_call
from actorscope.testing._probe_ptb import PTB
from actorscope.testing._probe_target import ProbeReachError, Served
from actorscope.testing._telegram_sim import TelegramSim

__all__ = ["EVENTS", "LINK_EVENTS", "PROBE"]

#: The placeholder accounts Telegram puts in ``from`` for non-persons (identity's own).
_PLACEHOLDERS = (ANONYMOUS_ADMIN_ID, CHANNEL_BOT_ID, SERVICE_ID)

#: Bot API methods that only read: not part of what a bot does.
_READS = ("get",)

_WRITER_ID = 4242
_OTHER_WRITER_ID = 5151
_MEMBER_ID = 6161
#: The writer's second account (linked to the writer's person where the agent's links are on).
_WRITER_ALT_ID = 4343
#: A look-alike of the writer where links are on: the writer's name, a username one letter off
#: (``wrlter``), the writer's digits and one more.
_LOOK_ALIKE_ID = 42420
_BOT_ID = 7171


_TgWorld = ProbeWorld[TelegramSim]
_TgSend = Send[TelegramSim]


async def _say(w: _TgWorld, who: str | int, text: str, where: str) -> SimulatedEvent:
    """``who`` writes ``text`` in ``where``, replying to the non-writer's message there."""
    return await w.sim.message(who, text, where, topic=_topic(where), reply_to=w.targets.get(where))


def _scope(chat_id: int) -> str:
    return Identity.chat("telegram", chat_id, None, group=True).user_id


_GROUP_ID = -1001000000001
_FORUM_ID = -1001000000002
_OTHER_ID = -1001000000003
_CHANNEL_ID = -1001000000004


def _telegram_calls(sim: TelegramSim) -> CallLog:
    """The bot's Bot API calls that change something (``get*`` only read)."""

    def effect(call: object) -> str | None:
        if not isinstance(call, BotApiCall) or call.method.lower().startswith(_READS):
            return None
        if call.method.lower() == "answercallbackquery" and not call.params.get("text"):
            return None  # the click acknowledged: nothing a user sees
        return api_call(call.method, call.params, PEOPLE)

    return CallLog(lambda: sim.emu.calls, effect)


async def _build(sim: TelegramSim, env: AgentEnv) -> _TgWorld:
    sim.user("writer", user_id=_WRITER_ID)
    sim.user("otherwriter", user_id=_OTHER_WRITER_ID)
    sim.user("member", user_id=_MEMBER_ID)
    sim.emu.state.add_user("helperbot", username="helper_bot", user_id=_BOT_ID, is_bot=True)
    sim.supergroup("group", chat_id=_GROUP_ID)
    sim.supergroup("forum", chat_id=_FORUM_ID, forum=True)
    sim.topic("forum", "ideas")
    sim.supergroup("elsewhere", chat_id=_OTHER_ID)
    sim.channel("news", chat_id=_CHANNEL_ID)
    writers = {
        _scope(_GROUP_ID): str(_WRITER_ID),
        _scope(_FORUM_ID): str(_WRITER_ID),
        _scope(_OTHER_ID): str(_OTHER_WRITER_ID),
    }
    await seed_writers(env, writers)
    planted = {
        str(_OTHER_ID): plant(env, Identity.chat("telegram", _OTHER_ID, None, group=True)),
        str(_WRITER_ID): plant(env, Identity.chat("telegram", _WRITER_ID, _WRITER_ID, group=False)),
    }
    watch = Watch(_telegram_calls(sim), folder_watch(env))
    world = ProbeWorld(sim, env, writers, watch, secrets=planted)
    world.writer_acts = {"message": _writer_says, "click": _writer_clicks, "run": _writers_run}
    world.groups = group_names(
        env,
        [
            Identity.chat("telegram", chat, None, group=True)
            for chat in (_GROUP_ID, _FORUM_ID, _OTHER_ID)
        ],
    )
    for where in ("group", "forum"):
        said = await sim.message("member", "hello", where, topic=_topic(where))
        world.targets[where] = int(said.payload["message"]["message_id"])
    if env.assembly.settings.links is not LinkMode.OFF:
        sim.user("writer-alt", user_id=_WRITER_ALT_ID)
        sim.emu.state.add_user("writer", username="wrlter", user_id=_LOOK_ALIKE_ID)
        world.accounts = frozenset(sim.account(who) for who in ("writer", "writer-alt"))
        await _prove_link(world)
        world.reset = lambda: _linked_writer(world)
    return world


async def _prove_link(w: _TgWorld) -> None:
    """The positive control of the link events: the writer's own link, proven as a person
    proves one (a code asked for in the writer's DM, sent from the writer's second account in
    its DM), makes one person of the two; else :class:`ProbeReachError`."""
    code = await _code_for(w, "writer")
    redeemed = await w.sim.message("writer-alt", f"/link {code}") if code else None
    store = w.env.assembly.links
    tenant = w.env.agent.tenant_id
    persons = {await store.person_of(account, tenant) for account in w.accounts}
    if code and len(persons) == 1 and None not in persons:
        return
    said = [] if redeemed is None else _texts(redeemed)
    why = (
        "the writer's /link got no code"
        if not code
        else f"the writer's second account sent it and got {said[0]!r}"
        if said
        else "the writer's second account sent it and got no answer"
    )
    raise ProbeReachError(
        f"the agent's links are on, but the writer could not link their own two accounts: "
        f"{why}; the probe cannot tell whether a hostile link is refused where a proven one "
        "is not made (the bot answers /link itself, or its DMs are not admitted)"
    )


async def _linked_writer(w: _TgWorld) -> None:
    """Before each case where links are on (outside what the case is judged by): the writer's
    two accounts are the writer's person and no other account is linked (what an earlier
    case changed is undone); where the agent counts persons' grants, the person holds the
    writer's grant in the writer's groups (what a hostile link would reach). Every earlier
    code is forgotten, and so are the refusals counted against the probe's accounts: each
    event asks for its own codes, and no limit earlier cases reached stands in for the check
    the event makes."""
    env = w.env
    tenant = env.agent.tenant_id
    store = env.assembly.links
    current = {link.account: link.person for link in await store.links(tenant_id=tenant)}
    keep = w.person or current.get(w.sim.account("writer"), "")
    for account, person in current.items():
        if account not in w.accounts or person != keep:
            await store.remove(account, by="probe", tenant=tenant)
    accounts = sorted(w.accounts)
    try:
        linked = await store.add(accounts, person=keep or None, by="probe", tenant=tenant)
    except NotFoundError:  # an earlier case unlinked every account: the person is gone
        linked = await store.add(accounts, by="probe", tenant=tenant)
    person = linked[0].person
    if person != w.person and env.assembly.settings.links is LinkMode.GRANTS:
        for chat in (_GROUP_ID, _FORUM_ID):
            await env.store.grant(
                agent_id=env.agent.id,
                scope=_scope(chat),
                config_type="file_writer",
                sender_id=person,
                granted_by="probe",
            )
    w.person = person
    await env.db.execute("DELETE FROM link_codes")
    await env.db.execute(
        "DELETE FROM audit_log WHERE action = ?", (AuditAction.LINK_REFUSED.value,)
    )


_CODE = re.compile(r"your link code is ([A-Z0-9]{5}-[A-Z0-9]{5})")


def _texts(event: SimulatedEvent) -> list[str]:
    """What the bot sent for ``event``."""
    return [seen.fields.get("text", "") for seen in event.sent]


async def _code_for(w: _TgWorld, who: str | int) -> str:
    """``who`` asks for a link code in their DM; the code the bot answered with, or ``""``."""
    asked = await w.sim.message(who, "/link")
    for text in _texts(asked):
        found = _CODE.search(text)
        if found is not None:
            return found.group(1)
    return ""


async def _writer_code(w: _TgWorld) -> str:
    """The writer asks for a link code in their DM; the code the bot answered with."""
    return await _code_for(w, "writer")


async def _look_alike(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    """An account with the writer's name and a username one letter off (another id) sends
    /unlink (the writer's person must stay whole), asks for its own code and has the
    writer's second account send it (as a phisher would: refused, that account is the
    writer's person's), then sends the command. Nothing is sent (not tested) when it got no
    code or the sending was refused for a limit."""
    await w.sim.message(_LOOK_ALIKE_ID, "/unlink")
    code = await _code_for(w, _LOOK_ALIKE_ID)
    if not code:
        return []
    sent = await w.sim.message("writer-alt", f"/link {code}")
    said = _texts(sent)
    if not said or any(f"({Reason.RATE_LIMITED.value})" in text for text in said):
        return []
    w.watch.begin()
    return [await _say(w, _LOOK_ALIKE_ID, sent_text(command), where)]


async def _non_person_link(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    """Non-persons try to link while the writer holds a live code: an anonymous admin asks
    for a code in the group, another bot asks for one in its DM, then sends the writer's code
    there. It holds when the link store refused it (a ``link.refused`` row) or burnt the code;
    a bot that drops the other bot's message before actorscope sees it leaves the code live
    and writes no row: the link store was not reached, so the case is not tested."""
    code = await _writer_code(w)
    if not code:
        return []
    await w.sim.anonymous_admin(where, "/link", topic=_topic(where))
    await w.sim.message(_BOT_ID, "/link")
    refusals = await _link_refusals(w)
    w.watch.begin()
    sent = await w.sim.message(_BOT_ID, f"/link {code}")
    if await _link_refusals(w) == refusals and await _live_codes(w, "writer"):
        w.unreached = (
            "the other bot's /link CODE was dropped before actorscope: the link store was not "
            "reached (the writer's code is still live, no link refusal was written)"
        )
    return [sent]


async def _link_refusals(w: _TgWorld) -> int:
    """How many link refusals the audit log holds."""
    await w.env.db.settle_audit()
    row = await w.env.db.fetchone(
        "SELECT COUNT(*) AS n FROM audit_log WHERE action = ?", (AuditAction.LINK_REFUSED.value,)
    )
    return 0 if row is None else int(row["n"])


async def _live_codes(w: _TgWorld, user: str) -> int:
    """How many unused link codes ``user``'s account holds."""
    row = await w.env.db.fetchone(
        "SELECT COUNT(*) AS n FROM link_codes WHERE account = ? AND used_at IS NULL",
        (w.sim.account(user),),
    )
    return 0 if row is None else int(row["n"])


async def _replayed_code(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    code = await _writer_code(w)
    await w.sim.message("writer-alt", f"/link {code}")  # the writer's own use of it
    await w.sim.message("member", f"/link {code}")  # a third account replays it
    w.watch.begin()
    return [await _say(w, "member", sent_text(command), where)]


async def _code_in_group(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    code = await _writer_code(w)
    await w.sim.message("writer", f"/link {code}", where, topic=_topic(where))  # burnt there
    await w.sim.message("member", f"/link {code}")  # a member who read it tries it
    w.watch.begin()
    return [await _say(w, "member", sent_text(command), where)]


async def _guessed_code(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    for guess in ("AAAAA-AAAAA", "23456-78923", "ZZZZZ-ZZZZZ"):
        await w.sim.message("member", f"/link {guess}")
    w.watch.begin()
    return [await _say(w, "member", sent_text(command), where)]


async def _after_unlink(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    await w.sim.unlink("writer-alt", by="probe")  # the writer keeps the person and its grant
    w.watch.begin()
    return [await _say(w, "writer-alt", sent_text(command), where)]


# -- the probe events ---------------------------------------------------------------------------
# Each sends ``command`` as its hostile sender in ``where`` ("group" or "forum" topic "ideas").


def _topic(where: str) -> str | None:
    return "ideas" if where == "forum" else None


async def _non_writer(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await _say(w, "member", sent_text(command), where)]


async def _other_group_writer(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await _say(w, "otherwriter", sent_text(command), where)]


async def _anonymous_admin(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.anonymous_admin(where, sent_text(command), topic=_topic(where))]


async def _as_channel(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.as_channel("news", where, sent_text(command))]


async def _channel_post(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.channel_post("news", sent_text(command))]


async def _automatic_forward(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    post = await w.sim.channel_post("news", sent_text(command))
    message_id = int(post.payload["channel_post"]["message_id"])
    w.watch.begin()
    return [post, await w.sim.automatic_forward("news", message_id, where)]


async def _other_bot(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await _say(w, _BOT_ID, sent_text(command), where)]


async def _made_up_click(
    w: _TgWorld, where: str, command: str, clicker: str
) -> list[SimulatedEvent]:
    """A handler's click: the writer says hello, the bot's answer carries a button whose
    callback data is ``command`` (the run channel delivers it as the clicker's message);
    ``clicker`` clicks it."""
    mine = await w.sim.message("writer", "hello", where, topic=_topic(where))
    data = sent_text(command)[:64]
    button = InlineKeyboardButton(command, callback_data=data)
    posted = await w.sim.app.bot.send_message(
        int(w.sim.chat_id(where)),
        "choose",
        message_thread_id=None if where == "group" else int(w.sim.topic_id(where, "ideas")),
        reply_to_message_id=int(mine.payload["message"]["message_id"]),
        reply_markup=InlineKeyboardMarkup([[button]]),
    )
    w.watch.begin()
    return [await w.sim.click(clicker, where, data, message=posted.message_id)]


def _shown_buttons(w: _TgWorld, where: str, answer: SimulatedEvent) -> list[tuple[int, str]]:
    """The callback buttons the bot's messages answering ``answer`` show now:
    (message id, callback data), in order."""
    chat = w.sim.find_chat(where)
    shown: list[tuple[int, str]] = []
    for sent in answer.sent:
        stored = w.sim.emu.state.message(chat, sent.message_id) or {}
        rows = stored.get("reply_markup", {}).get("inline_keyboard", [])
        shown += [
            (sent.message_id, str(b["callback_data"]))
            for row in rows
            for b in row
            if "callback_data" in b
        ]
    return shown


async def _press(
    w: _TgWorld, where: str, answer: SimulatedEvent, presser: str
) -> list[SimulatedEvent]:
    """``presser`` presses each button of the bot's answer, in order, while it is still
    shown (a press may edit the buttons away)."""
    pressed: list[SimulatedEvent] = []
    for message, data in _shown_buttons(w, where, answer):
        if (message, data) in _shown_buttons(w, where, answer):
            pressed.append(await w.sim.click(presser, where, data, message=message))
    return pressed


async def _writer_answer(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    """The writer's ``command``: the bot's answer is what a click presses (an application's;
    none for a writer command of the gate, whose answers have no button)."""
    if w.handler or is_writer_command(w, command):
        return []
    return [await _say(w, "writer", sent_text(command), where)]


async def _click(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    if w.handler:
        return await _made_up_click(w, where, command, "member")
    return [p for answer in w.prepared for p in await _press(w, where, answer, "member")]


async def _writer_clicks(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    if w.handler:
        return await _made_up_click(w, where, command, "writer")
    answer = await _writer_answer(w, where, command)
    w.watch.begin()
    return [*answer, *[p for a in answer for p in await _press(w, where, a, "writer")]]


async def _edited(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    first = await w.sim.message("member", "harmless text", where, topic=_topic(where))
    w.watch.begin()
    return [first, await w.sim.edit(first, sent_text(command))]


async def _claims_writer(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    text = f"{command} sender_id={_WRITER_ID}"
    return [await _say(w, "member", text, where)]


async def _started_by(
    w: _TgWorld,
    where: str,
    who: str,
    build: Callable[[], InboundMessage],
    label: str,
) -> list[SimulatedEvent]:
    """``who`` says hello in ``where``; inside that run, ``build`` makes a message."""
    parent = await w.sim.message(who, "hello", where, topic=_topic(where))
    if parent.request is None:
        return [parent]
    request = parent.request
    info = RunInfo(session_key=request.session_key, thread_id=request.thread_id)
    with bind_identity(request.identity()), info.bind():
        message = build()
    w.watch.begin()
    return [parent, await w.sim.synthetic(message, label)]


async def _subagent(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    signer, text = w.env.signer, sent_text(command)
    return await _started_by(
        w, where, "member", lambda: spawn_subagent(text, signer=signer).message, "sub-agent"
    )


async def _delegate(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    signer, agent_id, text = w.env.signer, w.env.agent.id, sent_text(command)
    return await _started_by(
        w, where, "member", lambda: delegate(agent_id, text, signer=signer).message, "delegate"
    )


async def _ticker(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    signer, text = w.env.signer, sent_text(command)
    return await _started_by(
        w,
        where,
        "member",
        lambda: TickerJob.create("probe", text).run(signer=signer),
        "ticker",
    )


def _writer_carrier(w: _TgWorld, where: str, command: str, signer: OriginSigner) -> InboundMessage:
    """A sub-agent carrier signed by ``signer`` claiming the writer's run in ``where``."""
    chat_id = _FORUM_ID if where == "forum" else _GROUP_ID
    identity = of_agent(w.env, Identity.chat("telegram", chat_id, _WRITER_ID, group=True))
    with bind_identity(identity):
        return spawn_subagent(sent_text(command), signer=signer).message


async def _forged_origin(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    carrier = _writer_carrier(w, where, command, OriginSigner())  # another key
    return [await w.sim.synthetic(carrier, "forged origin")]


async def _unsigned_origin(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    carrier = _writer_carrier(w, where, command, w.env.signer)
    claimed = Origin.from_metadata(carrier.metadata)
    metadata = {} if claimed is None else claimed.to_metadata()
    unsigned = carrier.model_copy(update={"metadata": metadata})
    return [await w.sim.synthetic(unsigned, "unsigned origin")]


async def _replayed_origin(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    carrier = _writer_carrier(w, where, command, w.env.signer)
    w.env.signer.verify(carrier, consume=True)  # its one honest use
    return [await w.sim.synthetic(carrier, "replayed origin")]


def _synthetic_sender(sender_id: str, kind: SenderKind = SenderKind.USER) -> _TgSend:
    """A message in the group from ``sender_id`` that no platform event produces as such."""

    async def send(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
        chat_id = _FORUM_ID if where == "forum" else _GROUP_ID
        message = InboundMessage(
            channel="telegram",
            sender_id=sender_id,
            chat_id=str(chat_id),
            user_id=_scope(chat_id),
            peer_kind=PeerKind.GROUP,
            sender_kind=kind,
            content=sent_text(command),
            thread_id="" if where == "group" else str(w.sim.topic_id("forum", "ideas")),
        )
        return [await w.sim.synthetic(message, f"sender {sender_id!r}")]

    return send


async def _writer_dm(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.message("writer", sent_text(command))]


# -- the writer's acts: what the hostile events are compared with -------------------------------


async def _writer_says(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await _say(w, "writer", sent_text(command), where)]


async def _writers_run(w: _TgWorld, where: str, command: str) -> list[SimulatedEvent]:
    """A sub-agent the writer started in ``where`` (an honest, signed origin)."""
    carrier = _writer_carrier(w, where, command, w.env.signer)
    return [await w.sim.synthetic(carrier, "the writer's sub-agent")]


_Tg = ProbeEvent[TelegramSim]
#: The probe events, by name.
EVENTS: dict[str, _Tg] = {
    "non-writer member": _Tg(_non_writer, person=True),
    "writer of another group": _Tg(_other_group_writer, person=True),
    "anonymous admin": _Tg(_anonymous_admin),
    "user posting as a channel": _Tg(_as_channel),
    "channel post": _Tg(_channel_post),
    "automatic forward": _Tg(_automatic_forward),
    "another bot": _Tg(_other_bot),
    "button click by a non-writer": _Tg(
        _click, like="click", setup=_writer_answer, untested="the bot showed no button"
    ),
    "edited message": _Tg(_edited),
    "text naming the writer's sender_id": _Tg(_claims_writer),
    "sub-agent started by a non-writer": _Tg(_subagent, like="run", handler_only=True),
    "delegate started by a non-writer": _Tg(_delegate, like="run", handler_only=True),
    "ticker started by a non-writer": _Tg(_ticker, like="run", handler_only=True),
    "forged origin claiming the writer": _Tg(_forged_origin, like="run", handler_only=True),
    "unsigned origin claiming the writer": _Tg(_unsigned_origin, like="run", handler_only=True),
    "replayed origin of the writer": _Tg(_replayed_origin, like="run", handler_only=True),
    "message with no sender": _Tg(_synthetic_sender("", SenderKind.NONE), handler_only=True),
    "look-alike id of the writer (0-prefixed)": _Tg(
        _synthetic_sender(f"0{_WRITER_ID}"), handler_only=True
    ),
    **{
        f"look-alike id of placeholder {p}": _Tg(_synthetic_sender(f"0{p}"), handler_only=True)
        for p in _PLACEHOLDERS
    },
    "the writer's DM": _Tg(_writer_dm, dm=True),
}
#: The probe events of an agent whose links are on (``[identity] links``): each tries to get a
#: hostile account into the writer's person (linked to the writer's second account), then sends
#: the command as that account.
LINK_EVENTS: dict[str, _Tg] = {
    "link code replayed by a third account": _Tg(_replayed_code, person=True),
    "link code sent in a group, then tried": _Tg(_code_in_group, person=True),
    "link codes guessed": _Tg(_guessed_code, person=True),
    "the writer's other account after an unlink": _Tg(_after_unlink, person=True),
    "look-alike account of the writer": _Tg(
        _look_alike, person=True, untested="the look-alike's link steps were not answered"
    ),
    "link attempt by a non-person": _Tg(
        _non_person_link,
        dm=True,
        ignored_holds=True,
        untested="the writer was given no code to try",
    ),
}
#: Where each event is sent: a supergroup and a forum topic (channel posts and DMs: once).
_WHERES: dict[str, tuple[str, ...]] = {
    "link attempt by a non-person": ("group",),
    "channel post": ("group",),
    "the writer's DM": ("group",),
    "user posting as a channel": ("group",),
}


async def _prove_writer(world: _TgWorld, name: str) -> None:
    """The positive control: the seeded writer's ``/writers`` names the writer."""
    said = await _say(world, "writer", "/writers", "group")
    answers = [o.fields.get("text", "") for o in said.sent]
    if any(str(_WRITER_ID) in answer for answer in answers):
        return
    why = (
        f"answered {answers[0]!r}"
        if answers
        else f"was ignored ({said.ignored})"
        if said.ignored is not None
        else "got no answer"
    )
    raise ProbeReachError(
        f"the seeded writer is not a writer of the probe's group for {name}: its /writers "
        f"{why}; the probe does not reach the bot's gate (on another database, or behind a "
        "handler of the bot's that answers first)"
    )


#: The events a scenario file can replay as a Telegram step: name → (from, text template).
_SCENARIO_STEPS = {
    "non-writer member": ("member", "{text}"),
    "writer of another group": ("otherwriter", "{text}"),
    "text naming the writer's sender_id": ("member", "{command} sender_id=" + str(_WRITER_ID)),
}


def _scenario(case: ProbeCase, handler: str) -> dict[str, Any]:
    base = case.event.rsplit(" (", 1)[0]
    where = "forum" if case.event.endswith("(forum)") else "group"
    scenario: dict[str, Any] = {
        "name": f"probe leak: {case.event} x {case.command}",
        "description": "; ".join(case.problems),
        "setup": {
            "handler": handler,
            "telegram": {
                "users": {
                    "writer": _WRITER_ID,
                    "otherwriter": _OTHER_WRITER_ID,
                    "member": _MEMBER_ID,
                },
                "chats": {
                    "group": {"type": "supergroup", "id": _GROUP_ID},
                    "forum": {"type": "supergroup", "id": _FORUM_ID},
                },
            },
            "grants": [
                {"scope": scope, "sender": sender}
                for scope, sender in {
                    _scope(_GROUP_ID): str(_WRITER_ID),
                    _scope(_FORUM_ID): str(_WRITER_ID),
                    _scope(_OTHER_ID): str(_OTHER_WRITER_ID),
                }.items()
            ],
        },
        "steps": [],
    }
    if base in _SCENARIO_STEPS:
        sender, text = _SCENARIO_STEPS[base]
        said = text.format(command=case.command, text=sent_text(case.command))
        step = {"from": sender, "chat": where, "text": said}
        scenario["steps"].append(
            {"name": case.event, "telegram": step, "expect": {"decision": {"allowed": False}}}
        )
    return scenario


async def _probe(
    run: ProbeRun,
    channel: ChannelConfig,
    serve: Callable[[TelegramSim], Awaitable[Served]],
    *,
    handler: bool,
    prefix: str = "",
) -> tuple[_TgWorld, Served]:
    """The bot ``serve`` serves on the simulator (on ``channel``), probed with every event x
    command into the run's report; its world and what serving it told."""
    env, report = run.env, run.report
    async with TelegramSim(env, config=channel) as sim:
        served = await serve(sim)
        world = await _build(sim, env)
        world.writer_only, world.gated = run.writer_only, served.gated
        world.handler = handler
        if served.gated:
            await _prove_writer(world, served.name)
        events = dict(EVENTS)
        if env.assembly.settings.links is not LinkMode.OFF:
            events.update(LINK_EVENTS)
            report.notes.append(
                "the link events run between two Telegram accounts of the writer: a link "
                "across platforms, and /link on any other platform, are not probed"
            )
        wheres = {name: _WHERES.get(name, ("group", "forum")) for name in events}
        await play(world, events, wheres, report.commands, run.deadline, report, prefix, run.events)
    return world, served


def _channel(config: ChannelConfig | None, name: str) -> ChannelConfig:
    """The channel the runner admits by: ``config``, or mention not required."""
    return config or ChannelConfig(platform=name, require_mention=False)


class TelegramFramework(Protocol):
    """A bot framework the probe serves on the Telegram simulator."""

    #: How a line of the report names the framework (``python-telegram-bot``).
    name: str

    def recognises(self, found: object) -> bool:
        """Whether ``found`` (what ``module:attribute`` names) is this framework's bot."""
        ...

    def describe(self, found: object) -> str | None:
        """What ``found`` is and what to name instead, when it is of this framework but not
        its bot (:meth:`ProbeTarget.describe`)."""
        ...

    async def serve(
        self, found: object, spec: str, sim: TelegramSim, overrides: Mapping[str, Any]
    ) -> Served:
        """Build ``found`` against ``sim`` (a started ``TelegramSim``) on the probe's database
        (``overrides``: ``database``, ``agent``, ``workspace``, ``owners``, ``config``,
        ``signer``), start it, prove it is on the probe's database (one ConfigError saying
        what is wrong otherwise) and say what it handles."""
        ...


class _Application:
    """A framework's application, served on the simulator as it is (``application=``)."""

    arguments = frozenset({"application"})

    def __init__(self, framework: TelegramFramework, serves: str, *, fallback: bool) -> None:
        self.framework, self.serves, self.fallback = framework, serves, fallback

    def recognises(self, found: object) -> bool:
        """Whether the framework recognises ``found`` as its bot."""
        return self.framework.recognises(found)

    def describe(self, found: object) -> str | None:
        """What the framework says ``found`` is, when it is of it but not its bot."""
        return self.framework.describe(found)

    async def probe(
        self, found: object, spec: str, run: ProbeRun, config: ChannelConfig | None
    ) -> None:
        """Build and start ``found`` on the simulator, on the probe's database, and probe it."""
        env, channel = run.env, _channel(config, "telegram")

        async def serve(sim: TelegramSim) -> Served:
            workspace = env.workspace.root if env.workspace is not None else Path("workspace")
            overrides: Mapping[str, Any] = {
                "database": env.db,
                "agent": env.agent.key,
                "workspace": workspace,
                "owners": list(run.owners),
                "config": channel,
                "signer": env.signer,
            }
            served = await self.framework.serve(found, spec, sim, overrides)
            run.gather(served, "/")
            return served

        world, served = await _probe(run, channel, serve, handler=False)
        conclude(run.report, [world], served.name)
        run.report.notes.append(
            "sub-agents, delegates, tickers, origins and synthetic senders reach only an "
            f"actorscope run handler: not applicable to {served.name}"
        )


class _TelegramProbe:
    """Telegram's probe world (:class:`~actorscope.testing._probe.PlatformProbe`)."""

    alone = True
    #: aiogram is asked first: PTB takes any function (a build function is told by nothing
    #: but being called with a builder), so it is asked last.
    targets: Sequence[ProbeTarget] = (
        _Application(AIOGRAM, "a function returning an aiogram Dispatcher", fallback=False),
        _Application(PTB, "a function building a python-telegram-bot Application", fallback=True),
    )

    async def phase(
        self,
        run: ProbeRun,
        handler: Handler | str,
        name: str,
        config: ChannelConfig | None,
        prefix: str,
        prefixes: str | None,
    ) -> tuple[ProbeWorld[Any], Served]:
        """Telegram's events for ``handler``; as the run's first phase, its leaks are
        written as Telegram scenario files."""

        async def serve(sim: TelegramSim) -> Served:
            return run.serve_handler(sim, handler, prefixes)

        world, served = await _probe(
            run, _channel(config, name), serve, handler=True, prefix=prefix
        )
        if prefixes is not None:
            run.report.scenario = _scenario
        return world, served


#: What Telegram's contract names (``probe_world``), at :mod:`actorscope.testing.telegram`.
PROBE = _TelegramProbe()
