"""Channel adapters: Telegram and Discord events → scope, actor and session key.

A platform's ``PLATFORM.inspect(event)`` (or Telegram's ``PLATFORM.normalize_update``,
Discord's ``normalize_message`` / ``normalize_interaction``: the message alone, ``None`` for
what a bot ignores) builds the :class:`~actorscope.messages.InboundMessage`; :class:`Pipeline`
takes it the one way every event goes (dedup, admission, shared claim, writer command or
publish) and returns an :class:`Ingress` whose :class:`Outcome` says what became of it,
admitting it by a :class:`ChannelConfig` (policies, mention gate) and dropping redeliveries
(across workers sharing a database, claimed in a :class:`TurnLedger`); a Telegram chat
migration moves the grants.
A platform is one subpackage, ``actorscope.channels.telegram`` / ``.discord``, imported by
name (so this face loads no platform library); :func:`platform` gives its side of the contract,
:class:`Platform` (docs/design.md, "Adding a platform").
"""

from actorscope.channels._adapter import ChannelAdapter
from actorscope.channels._base import (
    IgnoreReason,
    Ingress,
    Outcome,
)
from actorscope.channels._config import (
    ChannelConfig,
    ChannelSection,
    SenderIds,
)
from actorscope.channels._pipeline import Pipeline
from actorscope.channels._platform import Platform, platform
from actorscope.channels._turns import TurnLedger
from actorscope.channels._writer_commands import WriterCommand

__all__ = [
    "ChannelAdapter",
    "ChannelConfig",
    "ChannelSection",
    "IgnoreReason",
    "Ingress",
    "Outcome",
    "Pipeline",
    "Platform",
    "SenderIds",
    "TurnLedger",
    "WriterCommand",
    "platform",
]
