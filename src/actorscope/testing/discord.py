"""Discord's probe world, where Discord's platform contract names it
(``Platform.probe_world``: ``actorscope.testing.discord:PROBE``).

:data:`PROBE` holds the events of Discord's probe (a phase after the run's first platform's)
and serves a discord.py bot as it is, on :class:`~actorscope.testing.DiscordSim` and the
Discord emulator. ``actorscope probe`` and :func:`~actorscope.testing.probe` load it through
the contract when a run reaches Discord, so probing another platform imports none of it;
nothing else needs to.
"""

from actorscope.testing._probe_dpy import PROBE

__all__ = ["PROBE"]
