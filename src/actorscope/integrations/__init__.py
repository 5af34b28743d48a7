"""Integrations with other frameworks; each module is imported by name (never from here, so
importing ``actorscope.integrations`` loads no framework).

- ``actorscope.integrations.ptb``: a python-telegram-bot ``Application`` with actorscope's
  pipeline, identity, writer commands and ``requires(...)`` checks (:func:`ptb.install`).
- ``actorscope.integrations.discord_ext``: a discord.py ``commands.Bot`` Cog with the same
  pipeline, identity, writer commands and ``requires(...)`` checks (``ActorscopeCog``).
- ``actorscope.integrations.pydantic_ai`` (extra ``pydantic-ai``): identity in deps, guarded
  tools, the built-in tools as a toolset, and delegation that keeps the human actor.
"""

__all__: list[str] = []
