"""Telegram's probe world, where Telegram's platform contract names it
(``Platform.probe_world``: ``actorscope.testing.telegram:PROBE``).

:data:`PROBE` holds the events of Telegram's probe (the ~40 of a Telegram chat, and the link
events when the agent's links are on) and serves a python-telegram-bot application or an
aiogram dispatcher as it is, on :class:`~actorscope.testing.TelegramSim`. ``actorscope
probe`` and :func:`~actorscope.testing.probe` load it through the contract when a run reaches
Telegram, so probing another platform imports none of it; nothing else needs to.
"""

from actorscope.testing._probe_telegram import PROBE

__all__ = ["PROBE"]
