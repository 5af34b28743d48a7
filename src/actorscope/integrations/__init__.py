"""Integrations with other frameworks; each framework's module is imported by name (never
from here, so importing ``actorscope.integrations`` loads no framework).

- ``actorscope.integrations.ptb``: a python-telegram-bot ``Application`` with actorscope's
  pipeline, identity, writer commands and ``requires(...)`` checks (:func:`ptb.install`).
- ``actorscope.integrations.discord_ext``: a discord.py ``commands.Bot`` Cog with the same
  pipeline, identity, writer commands and ``requires(...)`` checks (``ActorscopeCog``).
- ``actorscope.integrations.pydantic_ai`` (extra ``pydantic-ai``): identity in deps, guarded
  tools, the built-in tools as a toolset, and delegation that keeps the human actor.

This face holds what every integration shares: *adoption*. Inside ``with Adoption(
database=db, workspace=root, agent="main").bind()`` every gate that opens (``install()``'s at
``post_init``, ``ActorscopeCog``'s at ``cog_load``) opens on that database, agent, workspace
and signer instead of its bot's own settings; the gate's ``opened`` (its ``database``,
``agent``, ``workspace`` and ``adopted``) says where it actually is. The testing kit and
``actorscope probe`` run users' bots this way.
"""

from actorscope.integrations._adoption import Adoption

__all__ = ["Adoption"]
