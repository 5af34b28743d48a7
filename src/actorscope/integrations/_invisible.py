"""Invisible until it denies: what an integration's gate lets through (docs/design.md).

An integration (PTB ``install()``, discord.py ``ActorscopeCog``) changes nothing a bot had:
every update that reached its handlers before still does, with the identity attached when
the adapter can name one. The gate stops only

* duplicates (a redelivery, a claim another worker holds), and
* what the bot's own settings refuse: a DM or group policy it configured (``dm_policy``,
  ``group_policy``, ``allow_from``, group overrides), and the two explicit options
  ``require_mention`` (un-addressed group text) and ``drop_non_persons`` (anonymous admins,
  channels, bots, webhooks).

Fail-closed happens where a permission is asked: ``requires`` and the policy deny
non-persons, empty and synthetic senders, and updates that carry no identity.
"""

from __future__ import annotations

from actorscope.channels import ChannelConfig, IgnoreReason, Ingress, Outcome

__all__ = ["gate_config", "stops"]

#: Refusals of the bot's own settings: the policies it configured and the mention option.
_SETTINGS = frozenset(
    {
        IgnoreReason.DM_DISABLED,
        IgnoreReason.GROUP_DISABLED,
        IgnoreReason.NOT_ALLOWED,
        IgnoreReason.NOT_MENTIONED,
    }
)
_NON_PERSONS = frozenset({IgnoreReason.NONPERSON_SENDER, IgnoreReason.BOT_SENDER})


def gate_config(
    config: ChannelConfig | None,
    *,
    platform: str,
    require_mention: bool | None,
    drop_non_persons: bool | None,
) -> ChannelConfig:
    """The admission settings of a gate: ``config`` (policies, allowlists, overrides) with the
    mention rule and the non-person rule taken from the options, else from what ``config``
    sets explicitly, else off."""
    base = config if config is not None else ChannelConfig.model_validate({"platform": platform})
    explicit = base.model_fields_set
    mention = require_mention
    if mention is None:
        mention = base.require_mention if "require_mention" in explicit else False
    persons = drop_non_persons
    if persons is None:
        persons = base.ignore_bots if "ignore_bots" in explicit else False
    return base.model_copy(update={"require_mention": mention, "ignore_bots": persons})


def stops(result: Ingress, config: ChannelConfig) -> bool:
    """Whether a gate with ``config`` stops the update the pipeline made ``result`` of."""
    if result.outcome in (Outcome.DUPLICATE, Outcome.CLAIMED_ELSEWHERE):
        return True
    reason = result.reason
    if reason in _SETTINGS:
        return True
    return reason in _NON_PERSONS and config.ignore_bots
