"""Admission: does the bot handle a normalised message, given its :class:`ChannelConfig`?

Order: non-person senders (``ignore_bots``), then the DM or group policy (owners always pass an
allowlist), then the mention gate in groups: a message passes it when the adapter marked it
addressed (an ``@mention``, a reply to the bot, a ``/command`` not naming another bot, a button
click, a slash command). An admitted group message has the bot's ``@mention`` stripped from its
text. A refused one comes back with the :class:`IgnoreReason` (and the message it refused).
The result is an :class:`~actorscope.channels.Ingress`, the one result type of ingress;
``Admission`` is its old name.
"""

from __future__ import annotations

from actorscope.channels._base import IgnoreReason, Ingress
from actorscope.channels._config import ChannelConfig, Policy
from actorscope.channels._mention import strip_mention
from actorscope.identity import PeerKind, Scope, SenderKind
from actorscope.messages import InboundMessage, MetaKey

__all__ = ["Admission", "admit"]


#: The old name of the admission result: it is the one ingress result type now.
Admission = Ingress


def _guild_of(message: InboundMessage) -> str:
    # Discord guild scopes are guild:<gid>:...; overrides may name the guild.
    scope = Scope.try_parse(message.user_id)
    return scope.guild_id if scope is not None else ""


def admit(
    message: InboundMessage,
    config: ChannelConfig,
    *,
    bot_username: str | None = None,
    bot_id: str | None = None,
) -> Ingress:
    """Apply ``config`` to ``message``: policies, then the mention gate."""
    if message.sender_kind is not SenderKind.USER and config.ignore_bots:
        return Ingress(message, IgnoreReason.NONPERSON_SENDER)
    sender = message.sender_id
    if message.peer_kind is PeerKind.DIRECT:
        if config.dm_policy is Policy.DISABLED:
            return Ingress(message, IgnoreReason.DM_DISABLED)
        if config.dm_policy is Policy.ALLOWLIST and not (
            sender and (sender in config.allow_from or sender in config.owners)
        ):
            return Ingress(message, IgnoreReason.NOT_ALLOWED)
        return Ingress(message)
    # Without overrides there is nothing to look up: no scope is parsed for the guild id.
    override = config.override_for(message.chat_id, _guild_of(message)) if config.groups else None
    policy = config.group_policy
    allow_from = config.allow_from
    require_mention = config.require_mention
    if override is not None:
        policy = override.policy or policy
        allow_from = allow_from if override.allow_from is None else override.allow_from
        if override.require_mention is not None:
            require_mention = override.require_mention
    if policy is Policy.DISABLED:
        return Ingress(message, IgnoreReason.GROUP_DISABLED)
    if policy is Policy.ALLOWLIST and not (
        sender and (sender in allow_from or sender in config.owners)
    ):
        return Ingress(message, IgnoreReason.NOT_ALLOWED)
    addressed = message.metadata.get(MetaKey.ADDRESSED, "")
    if require_mention and not addressed:
        return Ingress(message, IgnoreReason.NOT_MENTIONED)
    stripped = strip_mention(message.content, username=bot_username, user_id=bot_id)
    if stripped != message.content:
        message = message.model_copy(update={"content": stripped})
    return Ingress(message)
