"""A scenario's world: both simulators built from ``setup``, and its steps turned into events.

Names in a scenario (users, chats, topics, guilds, channels, threads) are resolved here; an
unknown name is a :class:`~actorscope.errors.ScenarioError` pointing at the key that used it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from actorscope.agents import AgentRegistry
from actorscope.channels import ChannelConfig
from actorscope.errors import ConfigError
from actorscope.identity import Scope
from actorscope.sandbox import DiscordWorld
from actorscope.testing._discord_sim import DiscordSim
from actorscope.testing._grants import Grants
from actorscope.testing._harness import AgentEnv, SimulatedEvent, Simulator
from actorscope.testing._telegram_sim import TelegramSim
from actorscope.testing.scenario._loader import LoadedScenario, ScenarioError
from actorscope.testing.scenario._model import (
    DiscordStep,
    GrantSpec,
    ReplyExpect,
    SessionSendStep,
    Setup,
    Step,
    TelegramStep,
)

__all__ = ["World"]

T = TypeVar("T")
#: The bot's account name in a scenario's Discord world.
DISCORD_BOT = "actorscope"


def _need(value: T | None, what: str) -> T:
    """A field the model's validators guarantee for this kind of step."""
    if value is None:
        raise ScenarioError(f"{what} is missing")
    return value


class World:
    """The Telegram and Discord simulators of one scenario, sharing one :class:`AgentEnv`."""

    def __init__(self, loaded: LoadedScenario, env: AgentEnv) -> None:
        self.loaded = loaded
        self.env = env
        setup = loaded.scenario.setup
        self.telegram = TelegramSim(env, config=_config("telegram", setup))
        self.discord = DiscordSim(
            env, config=_config("discord", setup), world=self._discord_world(setup)
        )
        #: Agent key → id, of the bot's agent and ``setup.agents`` (filled by apply_setup).
        self.agents: dict[str, str] = {setup.agent: env.agent.id}

    async def __aenter__(self) -> World:
        try:
            # Setup first: the runners' writer managers take the owners when they start.
            await self.apply_setup(Grants(self.env.store, self.env.agent))
            await self.telegram.start()
            await self.discord.start()
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.discord.stop()
        finally:
            await self.telegram.stop()

    def _error(self, path: tuple[str | int, ...], problem: str) -> ScenarioError:
        dotted = ".".join(str(p) for p in path)
        return ScenarioError(f"{self.loaded.at(*path)}: {dotted}: {problem}")

    # -- setup -----------------------------------------------------------------------------

    async def apply_setup(self, grants: Grants) -> None:
        """Create users, chats, guilds; set roles (owners also manage writers); write grants.

        Runs when the world is entered, before the simulators start."""
        setup = self.loaded.scenario.setup
        self._telegram_world(setup)
        for index, name in enumerate(setup.owners):
            self.env.roles[self._sender(name, ("setup", "owners", index))] = "owner"
        for name, role in setup.roles.items():
            self.env.roles[self._sender(name, ("setup", "roles", name))] = role
        agents = {setup.agent: grants.agent}
        for index, key in enumerate(setup.agents):
            if key in agents:
                raise self._error(("setup", "agents", index), f"agent {key!r} is listed twice")
            agents[key] = await AgentRegistry(self.env.db).create(key)
            self.agents[key] = agents[key].id
        persons = await self._persons(setup)
        for index, spec in enumerate(setup.grants):
            path = ("setup", "grants", index)
            scope = self._grant_scope(spec, path)
            if spec.sender.startswith(Scope.PERSON_PREFIX):
                sender = persons.get(spec.sender.removeprefix(Scope.PERSON_PREFIX), "")
                if not sender:
                    raise self._error((*path, "sender"), f"unknown person {spec.sender!r}")
            else:
                sender = (
                    spec.sender
                    if spec.sender == "*"
                    else self._sender(spec.sender, (*path, "sender"))
                )
            agent = agents.get(spec.agent or setup.agent)
            if agent is None:
                raise self._error((*path, "agent"), f"unknown agent {spec.agent!r}")
            target = Grants(grants.store, agent)
            if spec.deny:
                await target.deny(scope, sender, spec.type, by="scenario")
            else:
                await target.allow(scope, sender, spec.type, by="scenario")

    async def _persons(self, setup: Setup) -> dict[str, str]:
        """Link each person's accounts (as the scenario, an operator); name → person scope."""
        sims: dict[str, Simulator] = {"telegram": self.telegram, "discord": self.discord}
        found: dict[str, str] = {}
        for name, accounts in setup.persons.items():
            resolved: list[str] = []
            for index, account in enumerate(accounts):
                platform, _, user = account.partition(":")
                sim = sims.get(platform)
                users = getattr(setup, platform).users if sim is not None else {}
                if sim is None or not (user in users or user.isdigit()):
                    path = ("setup", "persons", name, index)
                    raise self._error(
                        path, f"{account!r} is not telegram:<user> or discord:<user> of the setup"
                    )
                resolved.append(sim.account(user))
            found[name] = await self.telegram.link(*resolved, by="scenario")
        return found

    def _telegram_world(self, setup: Setup) -> None:
        sim = self.telegram
        for name, user_id in setup.telegram.users.items():
            sim.user(name, user_id=user_id)
        for title, chat in setup.telegram.chats.items():
            if chat.type == "group":
                sim.group(title, chat_id=chat.id)
            elif chat.type == "channel":
                sim.channel(title, chat_id=chat.id)
            else:
                sim.supergroup(title, forum=chat.forum, chat_id=chat.id)
            for admin in chat.admins:
                if admin not in setup.telegram.users:
                    path = ("setup", "telegram", "chats", title, "admins")
                    raise self._error(path, f"unknown Telegram user {admin!r}")
                sim.make_admin(title, admin)
            for topic, thread_id in chat.topics.items():
                sim.topic(title, topic, thread_id=thread_id)

    def _discord_world(self, setup: Setup) -> DiscordWorld:
        """The Discord emulator's world ``setup.discord`` declares (one vocabulary)."""
        try:
            return DiscordWorld.declared(setup.discord.model_dump(), bot_name=DISCORD_BOT)
        except ConfigError as exc:
            raise ScenarioError(f"{self.loaded.at('setup', 'discord')}: {exc}") from None

    def _sender(self, name: str, path: tuple[str | int, ...]) -> str:
        setup = self.loaded.scenario.setup
        if name in setup.telegram.users:
            return str(self.telegram.find_user(name).id)
        if name in setup.discord.users:
            return str(self.discord.find_user(name).id)
        if name.isdigit():
            return name
        raise self._error(path, f"unknown user {name!r} (not in telegram.users or discord.users)")

    def _grant_scope(self, spec: GrantSpec, path: tuple[str | int, ...]) -> str:
        setup = self.loaded.scenario.setup
        if spec.chat is not None:
            if spec.chat not in setup.telegram.chats:
                raise self._error((*path, "chat"), f"unknown Telegram chat {spec.chat!r}")
            return str(
                Scope.group(self.telegram.config.name, self.telegram.find_chat(spec.chat).id)
            )
        if spec.guild is not None:
            if spec.guild not in setup.discord.guilds:
                raise self._error((*path, "guild"), f"unknown Discord guild {spec.guild!r}")
            return f"guild:{self.discord.find_guild(spec.guild).id}:*"
        return _need(spec.scope, "scope")

    # -- steps -----------------------------------------------------------------------------

    async def event(
        self, step: Step, parent: SimulatedEvent | None, replied: Mapping[str, Any] | None = None
    ) -> tuple[SimulatedEvent, Simulator]:
        """Play one step's event (a Telegram message may reply to the earlier message
        ``replied``); returns it and the simulator that played it."""
        if step.telegram is not None:
            return await self._telegram(step.telegram, replied), self.telegram
        if step.discord is not None:
            return await self._discord(step.discord), self.discord
        parent = _need(parent, "the parent step")
        on_discord = parent.request is not None and parent.request.channel == "discord"
        sim: Simulator = self.discord if on_discord else self.telegram
        return await self._chain(step, parent, sim), sim

    async def _chain(self, step: Step, parent: SimulatedEvent, sim: Simulator) -> SimulatedEvent:
        if step.subagent_announce is not None:
            return await sim.subagent_announce(parent, step.subagent_announce.result)
        if step.delegate_announce is not None:
            spec = step.delegate_announce
            target = None
            if spec.to is not None:
                self._known("to", spec.to, self.agents)
                target = self.agents[spec.to]
            return await sim.delegate_announce(
                parent, spec.result, target_agent_id=target, task=spec.task
            )
        if step.teammate_dispatch is not None:
            spec_t = step.teammate_dispatch
            return await sim.teammate_dispatch(parent, spec_t.name, spec_t.text)
        if step.session_send is not None:
            return await self._session_send(step.session_send, parent, sim)
        ticker = _need(step.ticker, "ticker")
        return await sim.ticker(parent, ticker.job, ticker.prompt)

    async def _session_send(
        self, spec: SessionSendStep, parent: SimulatedEvent, sim: Simulator
    ) -> SimulatedEvent:
        setup = self.loaded.scenario.setup
        if sim is self.telegram:
            self._known("chat", spec.chat, setup.telegram.chats)
        else:
            guilds = setup.discord.guilds.values()
            self._known("chat", spec.chat, {c for g in guilds for c in (*g.channels, *g.threads)})
        chat = None if spec.chat is None else sim.chat_id(spec.chat)
        thread = None if spec.topic is None else sim.topic_id(spec.chat, spec.topic)
        return await sim.session_send(parent, spec.text, chat_id=chat, thread_id=thread)

    def _known(self, kind: str, name: str | None, names: Any) -> None:
        if name is not None and name not in names:
            raise ScenarioError(f"{kind}: unknown name {name!r}")

    async def _telegram(
        self, spec: TelegramStep, replied: Mapping[str, Any] | None
    ) -> SimulatedEvent:
        setup = self.loaded.scenario.setup.telegram
        sim = self.telegram
        self._known("from", spec.sender, setup.users)
        self._known("chat", spec.chat, setup.chats)
        self._known("channel", spec.channel, setup.chats)
        if spec.kind == "anonymous_admin":
            return await sim.anonymous_admin(_need(spec.chat, "chat"), spec.text, topic=spec.topic)
        if spec.kind == "as_channel":
            channel, chat = _need(spec.channel, "channel"), _need(spec.chat, "chat")
            return await sim.as_channel(channel, chat, spec.text)
        if spec.kind == "channel_post":
            return await sim.channel_post(_need(spec.channel, "channel"), spec.text)
        if spec.kind == "click":
            return await self._click(spec)
        sender = _need(spec.sender, "from")
        reply_to = None
        if replied is not None:
            if str(replied["chat"]["id"]) != sim.chat_id(spec.chat or sender):
                raise ScenarioError(f"reply_to: step {spec.reply_to} was in another chat")
            reply_to = int(replied["message_id"])
        return await sim.message(sender, spec.text, spec.chat, topic=spec.topic, reply_to=reply_to)

    async def _click(self, spec: TelegramStep) -> SimulatedEvent:
        # The bot first posts the message that carries the button, as a real bot would.
        sim = self.telegram
        chat, button = _need(spec.chat, "chat"), _need(spec.button, "button")
        topic = None if spec.topic is None else int(sim.topic_id(chat, spec.topic))
        posted = await sim.app.bot.send_message(
            chat_id=int(sim.chat_id(chat)),
            text=spec.text or "choose",
            message_thread_id=topic,
            reply_markup=InlineKeyboardMarkup(
                [[InlineKeyboardButton(button, callback_data=button)]]
            ),
        )
        return await sim.click(_need(spec.sender, "from"), chat, button, message=posted.message_id)

    async def _discord(self, spec: DiscordStep) -> SimulatedEvent:
        setup = self.loaded.scenario.setup.discord
        sim = self.discord
        users = {**setup.users, **setup.bots}
        self._known("from", spec.sender, users)
        channels = {c for g in setup.guilds.values() for c in (*g.channels, *g.threads)}
        self._known("channel", spec.channel, channels)
        self._known("thread", spec.thread, channels)
        where = spec.thread or spec.channel
        if spec.kind == "webhook":
            return await sim.webhook(_need(where, "channel"), spec.text)
        sender = _need(spec.sender, "from")
        if spec.kind == "dm":
            return await sim.dm(sender, spec.text)
        if spec.kind == "bot":
            return await sim.bot_message(sender, spec.text, _need(where, "channel"))
        if spec.kind == "slash":
            command = _need(spec.command, "command")
            return await sim.slash(sender, command, where, options=spec.options)
        return await sim.message(sender, spec.text, _need(where, "channel"))

    def reply_fields(self, sim: Simulator, reply: ReplyExpect) -> dict[str, str]:
        """The observation fields a reply expectation names, with names resolved to ids."""
        fields: dict[str, str] = {}
        if reply.text is not None:
            fields["text"] = reply.text
        if reply.chat is not None:
            fields["chat"] = sim.chat_id(reply.chat)
        if reply.topic is not None:
            fields["topic"] = sim.topic_id(reply.chat, reply.topic)
        return fields

    def describe(self, step: Step) -> tuple[str, str, str]:
        """``(platform, chat, who)`` of a platform or HTTP step, for tables."""
        if step.telegram is not None:
            spec = step.telegram
            chat = spec.chat or spec.channel or "private"
            if spec.topic is not None:
                chat += f" / {spec.topic}"
            who = {
                "anonymous_admin": "anonymous admin",
                "as_channel": f"as channel {spec.channel}",
                "channel_post": "channel post",
                "click": f"{spec.sender} clicks {spec.button}",
            }.get(spec.kind, spec.sender or "")
            return "telegram", chat, who
        if step.discord is not None:
            spec_d = step.discord
            if spec_d.kind == "dm":
                chat = "DM"
            else:
                chat = f"#{spec_d.channel or ''}" + (f" / {spec_d.thread}" if spec_d.thread else "")
                chat = chat.replace("# / ", "thread ")
            who = spec_d.sender or "webhook"
            if spec_d.kind == "slash":
                who += f" /{spec_d.command}"
            return "discord", chat, who
        return "http", "-", _need(step.http, "http").user


def _config(platform: str, setup: Setup) -> ChannelConfig:
    return ChannelConfig.model_validate(
        {
            "platform": platform,
            "require_mention": setup.require_mention,
            "ignore_bots": setup.ignore_bots,
        }
    )
