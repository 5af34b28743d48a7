"""The ingress pipeline: the one path every platform event takes into the bot.

normalised event → chat migration (moves grants) → memory dedup → admission (policies, mention
gate) → shared claim → writer command (answered here, never handed on) or publish. The
Telegram and Discord runners, the simulators and the sandbox all feed their normalised events
to a :class:`Pipeline`; what is platform-specific (who a writer command names and whether the
invoker is a platform admin, answering a button click, deferring an interaction) comes in as
the callables of :meth:`Pipeline.process`, and the answers to writer commands go back through
the sender the transport hands it there. The composition root
(:func:`~actorscope.bots.assemble`) builds every pipeline; a transport is given one.

With a :class:`~actorscope.channels._turns.TurnLedger` (``actorscope run``), the shared claim
is a lease held until the turn is over: the ledger opens a turn for each published message
and the host finishes it, so a worker that dies mid-turn leaves the update to be redelivered.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from types import MappingProxyType

from actorscope.channels._base import Addressed, IgnoreReason, Ingress
from actorscope.channels._config import ChannelConfig
from actorscope.channels._dedup import DedupCache
from actorscope.channels._link_commands import (
    LinkRequest,
    describe_link,
    execute_link_command,
    link_request,
)
from actorscope.channels._mention import strip_mention
from actorscope.channels._migration import move_grants
from actorscope.channels._policy import admit
from actorscope.channels._shared_dedup import Claim, SharedDedup
from actorscope.channels._turns import TurnLedger
from actorscope.channels._writer_commands import (
    WriterCommand,
    execute_writer_command,
    parse_writer_command,
)
from actorscope.errors import StoreError
from actorscope.host import OutboundSender
from actorscope.identity import Identity, PeerKind
from actorscope.messages import InboundMessage, MetaKey, OutboundMessage
from actorscope.permissions import LinkMode, LinkOutcome, LinkStore, WriterManager

__all__ = ["STORE_AWAY", "Acknowledge", "Pipeline", "Publish", "RunWriterCommand"]

_log = logging.getLogger("actorscope.channels")

#: The answer to a writer command while the grant store cannot be reached.
STORE_AWAY = "the writers cannot be read or changed right now (the store is away); try again soon"

#: Runs a writer command for the platform (its target, whether the invoker is a platform admin,
#: passed to the manager as ``platform_admin``) as the bound identity; returns the answer, or
#: ``None`` to leave it unanswered (an edited command).
RunWriterCommand = Callable[[WriterCommand, Identity], Awaitable[str | None]]
#: Called for an admitted event just before it is published (answer a click, defer).
Acknowledge = Callable[[], Awaitable[None]]
#: Where admitted messages go (the host's bus, from a channel).
Publish = Callable[[InboundMessage], Awaitable[None]]


class Pipeline:
    """Dedup, admission, shared claim and writer commands for one channel of one agent.

    ``publish`` takes each admitted message (``MessageBus.publish_from_channel``), or
    ``run_here`` (``MessageBus.run_from_channel``), when given, one whose caller is a task of
    its event's own (:meth:`process`'s ``own_task``);
    ``agent_key`` is the agent the channel's messages are normalised for (their session
    keys), ``agent_id`` / ``tenant_id`` the one writer commands act for. With ``links`` (an
    agent whose ``[identity] links`` is on) ``/link`` and ``/unlink`` are answered here, and
    with ``link_mode`` ``dm`` a linked account's direct messages run in its person's scope.
    """

    def __init__(
        self,
        config: ChannelConfig,
        *,
        writers: WriterManager,
        publish: Publish,
        run_here: Publish | None = None,
        agent_key: str = "main",
        agent_id: str | None = None,
        tenant_id: str | None = None,
        shared_dedup: SharedDedup | None = None,
        ledger: TurnLedger | None = None,
        links: LinkStore | None = None,
        link_mode: LinkMode = LinkMode.OFF,
    ) -> None:
        self.config = config
        self.writers = writers
        self.agent_key = agent_key
        self.dedup = DedupCache()
        self.shared_dedup = shared_dedup
        #: The open turns (``None``: claims are done at once, turns not tracked).
        self.ledger = ledger
        self._publish = publish
        self._run_here = run_here
        self._agent_id = agent_id
        self._tenant_id = tenant_id
        self._links = links if link_mode is not LinkMode.OFF else None
        self._person_scopes = link_mode is LinkMode.DM

    @property
    def normaliser_drops_non_persons(self) -> bool:
        """Whether a normaliser may drop non-person senders itself (its ``ignore_bots``): not
        while link codes are on, since a code an anonymous admin, a channel or a bot shows in
        a group must reach :meth:`process` to be burnt; admission refuses the sender after."""
        return self.config.ignore_bots and self._links is None

    async def process(
        self,
        ingress: Ingress,
        *,
        bot_username: str | None = None,
        bot_id: str | None = None,
        run_command: RunWriterCommand | None = None,
        acknowledge: Acknowledge | None = None,
        command_prefixes: str = "",
        sender: OutboundSender | None = None,
        own_task: bool = False,
        named_prefix: str = "",
    ) -> Ingress:
        """Take one normalised event the whole way; the result says what became of it.

        A writer command is named by the ``command`` metadata the normaliser sets, or (for
        ``command_prefixes``, e.g. ``"!"`` for Discord messages) starts the text. Without
        ``run_command`` a writer command runs with no target (listing works; adding or
        removing is refused, and audited, for want of a person). Its answer is sent through
        ``sender`` (the transport) before the claim is done; without one it is only returned
        (the result's ``answer``). ``own_task``: the caller is a task of this event's own
        (discord.py's events, a webhook request), so with ``run_here`` the turn may run in it;
        never for a transport that feeds its events one after another (polling).
        ``named_prefix``: the prefix a framework matched before the command the metadata
        names (discord.py's ``ctx.prefix``); a link command's code is what follows it and the
        name.
        """
        if ingress.migration is not None:
            moved = await move_grants(self.writers.store, ingress.migration, moved_by="migration")
            _log.info("channels.grants_moved count=%d to %s", moved, ingress.migration.new_scope)
        message = ingress.message
        if message is None or ingress.reason is not None:
            if message is not None and ingress.reason is IgnoreReason.NOT_FOR_THIS_BOT:
                await self.burn_exposed(message)  # another bot's command may show a code
            return ingress
        if self.dedup.seen_message(message):
            return Ingress(message, IgnoreReason.DUPLICATE)
        command = _command(message, bot_id, command_prefixes)
        linking = self._link_request(message, bot_id, command_prefixes, named_prefix)
        burnt: LinkOutcome | None = None
        if linking is not None:
            if command is None and MetaKey.ADDRESSED not in message.metadata:
                message = _addressed(message)
            if linking.argument and message.peer_kind is not PeerKind.DIRECT:
                # A code sent in a group is burnt whether or not the group is admitted.
                burnt = await self._link(message, linking)
        elif self._links is not None and message.peer_kind is not PeerKind.DIRECT:
            await self.burn_exposed(message)
        if command is not None and MetaKey.ADDRESSED not in message.metadata:
            # A writer command is addressed to the bot (Discord's "!" ones carry no mark).
            metadata = {**message.metadata, MetaKey.ADDRESSED.value: Addressed.COMMAND.value}
            message = message.model_copy(update={"metadata": MappingProxyType(metadata)})
        admission = admit(message, self.config, bot_username=bot_username, bot_id=bot_id)
        if not admission.admitted or admission.message is None:
            _log.debug("channels.not_admitted reason=%s", admission.reason)
            return admission
        message = admission.message
        if self.shared_dedup is not None:
            lease = self.ledger is not None and self.ledger.leases
            claim = await self.shared_dedup.take_message(message, lease=lease)
            if claim is Claim.HELD:
                self.dedup.forget_message(message)  # not handled here: a redelivery may be
                return Ingress(message, IgnoreReason.CLAIM_HELD)
            if claim is Claim.DONE:
                return Ingress(message, IgnoreReason.CLAIMED_ELSEWHERE)
        if command is not None:
            answered = await self._answer(message, command, run_command, sender)
            if self.ledger is not None:
                await self.ledger.finish_now(message)
            return answered
        if linking is not None:
            outcome = burnt if burnt is not None else await self._link(message, linking)
            answered = await self._send(message, linking.command.value, describe(outcome), sender)
            if self.ledger is not None:
                await self.ledger.finish_now(message)
            return answered
        if self._person_scopes and message.peer_kind is PeerKind.DIRECT:
            message = await self._as_person(message)
        if acknowledge is not None:
            await acknowledge()
        if self.ledger is not None:
            self.ledger.open(message)
        if own_task and self._run_here is not None:
            await self._run_here(message)
        else:
            await self._publish(message)
        return Ingress(message)

    async def _answer(
        self,
        message: InboundMessage,
        command: WriterCommand,
        run_command: RunWriterCommand | None,
        sender: OutboundSender | None,
    ) -> Ingress:
        identity = replace(message.identity(), agent_id=self._agent_id, tenant_id=self._tenant_id)
        try:
            if run_command is None:
                text: str | None = await execute_writer_command(self.writers, command, identity)
            else:
                text = await run_command(command, identity)
        except StoreError as exc:
            # The grant store is away (a restart, a partition): say so, never a traceback.
            _log.warning("channels.writer_command_failed command=%s: %s", command.value, exc)
            text = STORE_AWAY
        if text is None:
            return Ingress(message, command=command.value)
        return await self._send(message, command.value, text, sender)

    @staticmethod
    async def _send(
        message: InboundMessage, command: str, text: str, sender: OutboundSender | None
    ) -> Ingress:
        answer = OutboundMessage.reply_to(message, text)
        if sender is not None:
            await sender.send(answer)
        return Ingress(message, command=command, answer=answer)

    def _link_request(
        self, message: InboundMessage, bot_id: str | None, prefixes: str, named_prefix: str
    ) -> LinkRequest | None:
        if self._links is None:
            return None
        named = message.metadata.get(MetaKey.COMMAND, "")
        if named and named_prefix and message.content.startswith(named_prefix):
            return link_request(named, message.content, prefixes, prefix=named_prefix)
        return link_request(named, strip_mention(message.content, user_id=bot_id), prefixes)

    async def _link(self, message: InboundMessage, request: LinkRequest) -> LinkOutcome | None:
        """Run a link command as the message's sender; ``None`` when the store is away."""
        if self._links is None or self._tenant_id is None:
            return None
        try:
            return await execute_link_command(
                self._links, request, message.identity(), self._tenant_id
            )
        except StoreError as exc:
            _log.warning("channels.link_command_failed command=%s: %s", request.command, exc)
            return None

    async def burn_exposed(self, message: InboundMessage) -> None:
        """While links are on: burn each live link code ``message`` (a group's) shows in its
        plain text, audited, whether or not the group is admitted; nothing is answered. Only
        a text holding a token redeem would take for a code costs a lookup; while the store is
        away the message goes on (logged)."""
        if self._links is None or self._tenant_id is None or message.peer_kind is PeerKind.DIRECT:
            return
        codes = LinkStore.codes_in(message.content)
        if not codes:
            return
        try:
            burnt = await self._links.burn_exposed(codes, message.identity(), self._tenant_id)
        except StoreError as exc:
            _log.warning("channels.exposed_code_unchecked: %s", exc)
            return
        if burnt:
            _log.info("channels.link_code_burnt count=%d chat=%s", len(burnt), message.chat_id)

    async def _as_person(self, message: InboundMessage) -> InboundMessage:
        """The message in its linked person's scope (``dm`` mode), else as it is. While the
        store is away the account's own scope is kept: a person's memory is never guessed."""
        if self._links is None or self._tenant_id is None:
            return message
        try:
            scope = await self._links.direct_scope(message.identity(), self._tenant_id)
        except StoreError as exc:
            _log.warning("channels.person_scope_unknown: %s", exc)
            return message
        if scope is None:
            return message
        return message.model_copy(update={"user_id": scope})

    async def writer_command(
        self,
        command: WriterCommand,
        identity: Identity,
        *,
        target: str = "",
        target_name: str = "",
        usage: str = "",
        platform_admin: bool = False,
    ) -> str:
        """Run ``command`` as ``identity`` on this channel's writers and word the outcome: the
        writer-command surface a platform's ``run_command`` (given to :meth:`process`) ends
        in, once it has found the ``target`` the way its platform makes trustworthy (never
        from the command's text). ``platform_admin``: the platform says ``identity``
        administers the group."""
        return await execute_writer_command(
            self.writers,
            command,
            identity,
            target=target,
            target_name=target_name,
            usage=usage,
            platform_admin=platform_admin,
        )


def describe(outcome: LinkOutcome | None) -> str:
    """The answer to a link command (the store away: say so, never a traceback)."""
    if outcome is None:
        return "links cannot be read or changed right now (the store is away); try again soon"
    return describe_link(outcome)


def _addressed(message: InboundMessage) -> InboundMessage:
    """``message`` marked as a command addressed to the bot."""
    metadata = {**message.metadata, MetaKey.ADDRESSED.value: Addressed.COMMAND.value}
    return message.model_copy(update={"metadata": MappingProxyType(metadata)})


def _command(message: InboundMessage, bot_id: str | None, prefixes: str) -> WriterCommand | None:
    named = message.metadata.get(MetaKey.COMMAND, "")
    if named:
        return WriterCommand.named(named)
    if not prefixes:
        return None
    return parse_writer_command(strip_mention(message.content, user_id=bot_id), prefixes=prefixes)
