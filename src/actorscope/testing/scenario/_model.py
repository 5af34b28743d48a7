"""The schema of a ``*.scenario.yaml`` file (pydantic; unknown keys are errors).

::

    name: a group member asks for a write
    setup:
      agent: main                     # the agent the bot runs as (default main)
      handler: telegram_bot:handle    # optional: the user's `actorscope run` handler instead
                                      # of the stub bot (then steps have no action / reply)
      probe: true                     # with handler: probe it too; any leak fails the file
      agents: [helper]                # more agents of the tenant, for grants: agent: helper
      owners: [alice]                 # sender names or ids: role owner
      roles: {bob: viewer}
      ignore_bots: true               # false: anonymous admins, webhooks ... reach the bot
      links: grants                   # [identity] links: off (default), dm or grants
      persons:                        # linked accounts, as an operator links them
        ann: [telegram:alice, discord:carol]                 # <platform>:<user name or id>
      grants:
        - {chat: devs, sender: alice, type: file_writer}     # group:telegram:<devs id>
        - {guild: lab, sender: "person:ann"}                 # ann's person: both accounts
        - {guild: lab, sender: carol}                        # guild:<gid>:*
        - {scope: "group:telegram:-100123", sender: "*", type: cron, deny: true}
      telegram:
        users: {alice: 4242, bob: null}                      # null: any id
        chats:
          devs: {type: supergroup, id: -1001234567890, forum: true, topics: {ideas: 7}}
      discord:
        users: {carol: 9001}
        guilds:
          lab: {id: 8123, channels: {general: 8124}, threads: {design: {parent: general}}}
    steps:
      - telegram: {from: alice, chat: devs, topic: ideas, text: please write notes.txt}
        action: file_writer           # what the bot checks on this turn
        reply: on it                  # what the bot answers
        expect:
          identity: {user_id: "group:telegram:-1001234567890", sender_id: "4242"}
          decision: {allowed: true, reason: granted}
          replies: [{text: on it, chat: devs, topic: ideas}]
      - subagent_announce: {result: notes.txt written}       # of the previous step's run
        action: file_writer
        expect: {decision: {allowed: true, reason: granted}}
      - delegate_announce: {result: done, to: helper, of: 1} # also: teammate_dispatch,
        action: file_writer                                  # session_send, ticker
      - telegram: {kind: click, from: bob, chat: devs, button: approve}
        action: file_writer
      - telegram: {from: carol, chat: devs, text: /addwriter, reply_to: 1}  # to step 1's message
        expect: {replies: [{text: "added @alice (4242) as a writer"}]}
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from actorscope.permissions import ConfigType

__all__ = [
    "CHAIN_KINDS",
    "AnnounceStep",
    "ChainStep",
    "DecisionExpect",
    "DelegateStep",
    "DiscordGuildSpec",
    "DiscordSetup",
    "DiscordStep",
    "Expect",
    "GrantSpec",
    "HttpStep",
    "IdentityExpect",
    "ReplyExpect",
    "Scenario",
    "SessionSendStep",
    "Setup",
    "Step",
    "TeammateStep",
    "TelegramChatSpec",
    "TelegramSetup",
    "TelegramStep",
    "ThreadSpec",
    "TickerStep",
]

Id = int | str
#: Steps that continue an earlier step's run through a propagation wrapper.
CHAIN_KINDS = (
    "subagent_announce",
    "delegate_announce",
    "teammate_dispatch",
    "session_send",
    "ticker",
)
_EVENT_KINDS = ("telegram", "discord", "http", *CHAIN_KINDS)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _text_id(value: object) -> object:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class GrantSpec(_Strict):
    """A grant: where (``scope``, a Telegram ``chat`` or a Discord ``guild``), to which
    ``sender`` (a user's name, an id or ``*``), what, and for which agent (default: the one
    the bot runs as)."""

    scope: str | None = None
    chat: str | None = None
    guild: str | None = None
    sender: str
    type: ConfigType = ConfigType.FILE_WRITER
    deny: bool = False
    agent: str | None = None

    _sender = field_validator("sender", mode="before")(_text_id)

    @model_validator(mode="after")
    def _one_place(self) -> GrantSpec:
        places = [name for name in ("scope", "chat", "guild") if getattr(self, name) is not None]
        if len(places) != 1:
            raise ValueError("a grant names exactly one of scope, chat or guild")
        return self


class TelegramChatSpec(_Strict):
    """A Telegram chat of the scenario."""

    type: Literal["group", "supergroup", "channel"]
    id: int | None = None
    forum: bool = False
    topics: dict[str, int | None] = {}
    admins: list[str] = []

    @model_validator(mode="after")
    def _topics_need_forum(self) -> TelegramChatSpec:
        if self.topics and not self.forum:
            raise ValueError("topics need forum: true")
        if self.forum and self.type != "supergroup":
            raise ValueError("only a supergroup can be a forum")
        return self


class TelegramSetup(_Strict):
    """Telegram users (name → id or null) and chats."""

    users: dict[str, int | None] = {}
    chats: dict[str, TelegramChatSpec] = {}


class ThreadSpec(_Strict):
    """A Discord thread under one of the guild's channels."""

    parent: str
    id: int | None = None


class DiscordGuildSpec(_Strict):
    """A Discord guild: channels (name → id or null), threads, roles (name → permission names,
    e.g. ``manage_guild``), members' roles (user → role names) and webhooks (name → channel).

    The Discord emulator's vocabulary: ``DiscordWorld.declared()`` builds the
    world from it and names what is wrong.
    """

    id: int | None = None
    owner: str | None = None
    channels: dict[str, int | None] = {}
    threads: dict[str, ThreadSpec] = {}
    roles: dict[str, list[str]] = {}
    members: dict[str, list[str]] = {}
    webhooks: dict[str, str] = {}


class DiscordSetup(_Strict):
    """Discord users, other bots and guilds."""

    users: dict[str, int | None] = {}
    bots: dict[str, int | None] = {}
    guilds: dict[str, DiscordGuildSpec] = {}


class Setup(_Strict):
    """Agent, roles, grants and the two platforms' worlds."""

    agent: str = Field("main", description="the agent the bot runs as")
    handler: str | None = Field(
        None,
        description="`module:function` of an `actorscope run` handler (as in `bot.toml`; the "
        "scenario's folder is searched first) that runs instead of the built-in stub bot",
    )
    probe: bool = Field(
        False,
        description="after the steps, run `actorscope probe` on `handler` (commands: the "
        "steps' telegram texts that start with `/`); any leak, hang or handler error fails "
        "the scenario",
    )
    agents: list[str] = Field([], description="more agents of the tenant, for grants")
    owners: list[str] = Field([], description="sender names or ids that run with role owner")
    roles: dict[str, str] = Field({}, description="sender name or id → role")
    links: Literal["off", "dm", "grants"] = Field(
        "off", description="what linked accounts change for the agent (`[identity] links`)"
    )
    persons: dict[str, list[str]] = Field(
        {},
        description="persons by name, each its accounts (`telegram:alice`, `discord:carol`: "
        "a user of that platform's setup, by name or id); a grant's sender `person:<name>` "
        "names one",
    )
    grants: list[GrantSpec] = []

    # YAML reads a bare ``off`` as false: it means "off" here.
    _links = field_validator("links", mode="before")(
        lambda value: "off" if value is False else value
    )
    ignore_bots: bool = Field(
        True, description="false: anonymous admins, webhooks and other bots reach the bot"
    )
    require_mention: bool = Field(
        False, description="in groups, only what mentions the bot reaches it (as in `bot.toml`)"
    )
    telegram: TelegramSetup = TelegramSetup()
    discord: DiscordSetup = DiscordSetup()

    _owners = field_validator("owners", mode="before")(
        lambda value: [_text_id(v) for v in value] if isinstance(value, list) else value
    )


class TelegramStep(_Strict):
    """A Telegram event: a message (private chat when ``chat`` is omitted), an anonymous admin,
    a post as a channel, a channel post, or a click on an inline ``button`` (its callback data)
    of a message the bot posts just before (``text``, default "choose"). A message may reply
    to the message of an earlier step (``reply_to``: its number), as ``/addwriter`` needs."""

    kind: Literal["message", "anonymous_admin", "as_channel", "channel_post", "click"] = "message"
    sender: str | None = Field(None, alias="from")
    chat: str | None = None
    topic: str | int | None = None
    channel: str | None = None
    text: str = ""
    button: str | None = None
    reply_to: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _fields_for_kind(self) -> TelegramStep:
        if self.kind != "message" and self.reply_to is not None:
            raise ValueError("only a message can reply_to")
        if self.kind in ("message", "click") and self.sender is None:
            raise ValueError(f"a {self.kind} needs from")
        if self.kind == "click" and (self.chat is None or self.button is None):
            raise ValueError("a click needs chat and button")
        if self.kind != "click" and self.button is not None:
            raise ValueError("only a click has a button")
        if self.kind != "click" and not self.text:
            raise ValueError(f"a {self.kind} needs text")
        if self.kind in ("anonymous_admin", "as_channel") and self.chat is None:
            raise ValueError(f"{self.kind} needs chat")
        if self.kind in ("as_channel", "channel_post") and self.channel is None:
            raise ValueError(f"{self.kind} needs channel")
        return self


class DiscordStep(_Strict):
    """A Discord event: a guild message, a DM, a webhook or bot post, or a slash command."""

    kind: Literal["message", "dm", "webhook", "bot", "slash"] = "message"
    sender: str | None = Field(None, alias="from")
    channel: str | None = None
    thread: str | None = None
    text: str = ""
    command: str | None = None
    options: dict[str, str | int | bool] = {}

    @model_validator(mode="after")
    def _fields_for_kind(self) -> DiscordStep:
        if self.kind != "webhook" and self.sender is None:
            raise ValueError(f"a {self.kind} needs from")
        if self.kind in ("message", "webhook", "bot") and not (self.channel or self.thread):
            raise ValueError(f"a {self.kind} needs channel or thread")
        if self.kind == "slash" and not self.command:
            raise ValueError("a slash command needs command")
        if self.kind != "slash" and not self.text:
            raise ValueError(f"a {self.kind} needs text")
        return self


class HttpStep(_Strict):
    """An authenticated HTTP API call by ``user``."""

    user: str
    role: str = ""


class ChainStep(_Strict):
    """A step that continues an earlier step's run (``of``, default: the previous one)."""

    of: int | None = Field(
        None, ge=1, description="the number of the earlier step (default: the previous one)"
    )


class AnnounceStep(ChainStep):
    """A sub-agent spawned in an earlier step's run announces ``result``."""

    result: str = "done"


class DelegateStep(ChainStep):
    """An earlier step's run delegates ``task`` to agent ``to`` (a key of ``setup.agents``;
    default: the bot's own agent) and the delegate's ``result`` comes back to it."""

    result: str = "done"
    task: str = "delegated task"
    to: str | None = None


class TeammateStep(ChainStep):
    """Teammate ``name`` dispatches ``text`` to the bot's agent on behalf of an earlier run."""

    name: str = "helper"
    text: str = "hello"


class SessionSendStep(ChainStep):
    """An earlier step's run sends ``text`` into a session: ``chat`` and ``topic`` (Telegram
    chat/topic or Discord channel/thread names; default: the run's own chat and thread)."""

    text: str = "hello"
    chat: str | None = None
    topic: str | int | None = None

    @model_validator(mode="after")
    def _topic_needs_chat(self) -> SessionSendStep:
        if self.topic is not None and self.chat is None:
            raise ValueError("topic needs chat")
        return self


class TickerStep(ChainStep):
    """A ticker job created in an earlier step's run fires."""

    job: str = "job"
    prompt: str = "tick"


class IdentityExpect(_Strict):
    """The identity the turn runs as; only the fields given are compared."""

    user_id: str | None = None
    sender_id: str | None = None
    actor_id: str | None = None
    session_key: str | None = None
    sender_kind: str | None = None
    peer_kind: str | None = None
    chat_id: str | None = None
    thread_id: str | None = None
    role: str | None = None

    _ids = field_validator("*", mode="before")(_text_id)


class DecisionExpect(_Strict):
    """The permission decision of the step's ``action``."""

    allowed: bool
    reason: str | None = None


class ReplyExpect(_Strict):
    """A reply of the bot: text, chat (name) and topic/thread (name or id)."""

    text: str | None = None
    chat: str | None = None
    topic: str | int | None = None


class Expect(_Strict):
    """What a step must produce; anything left out is not checked."""

    ignored: str | None = None
    identity: IdentityExpect | None = None
    decision: DecisionExpect | None = None
    replies: list[ReplyExpect] | None = None


class Step(_Strict):
    """One event (exactly one of the event keys), the bot's scripted turn and expectations."""

    name: str | None = None
    telegram: TelegramStep | None = None
    discord: DiscordStep | None = None
    http: HttpStep | None = None
    subagent_announce: AnnounceStep | None = None
    delegate_announce: DelegateStep | None = None
    teammate_dispatch: TeammateStep | None = None
    session_send: SessionSendStep | None = None
    ticker: TickerStep | None = None
    action: ConfigType | None = Field(
        None,
        description="The config type the bot checks on this turn (one type, not `*`).",
    )
    reply: str | None = None
    expect: Expect = Expect()

    @field_validator("action")
    @classmethod
    def _concrete_action(cls, value: ConfigType | None) -> ConfigType | None:
        if value is ConfigType.ANY:
            raise ValueError("a check asks about one config type, not '*'")
        return value

    @model_validator(mode="after")
    def _one_event(self) -> Step:
        given = [kind for kind in _EVENT_KINDS if getattr(self, kind) is not None]
        if len(given) != 1:
            raise ValueError(f"a step has exactly one of {', '.join(_EVENT_KINDS)}")
        if self.expect.ignored is not None and (self.expect.decision or self.expect.replies):
            raise ValueError("an ignored event has no decision or replies to expect")
        return self

    @property
    def kind(self) -> str:
        """Which event key this step uses."""
        return next(kind for kind in _EVENT_KINDS if getattr(self, kind) is not None)

    @property
    def chain(self) -> ChainStep | None:
        """The spec of a step that continues an earlier run, or ``None``."""
        spec: ChainStep | None = getattr(self, self.kind) if self.kind in CHAIN_KINDS else None
        return spec


class Scenario(_Strict):
    """A whole scenario file."""

    name: str | None = None
    description: str = ""
    setup: Setup = Setup()
    steps: list[Step] = Field(min_length=1)
