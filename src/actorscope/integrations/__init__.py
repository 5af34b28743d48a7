"""Integrations with other frameworks; each module needs its own extra and is imported by name.

- ``actorscope.integrations.pydantic_ai`` (extra ``pydantic-ai``): identity in deps, guarded
  tools, the built-in tools as a toolset, and delegation that keeps the human actor.
"""

__all__: list[str] = []
