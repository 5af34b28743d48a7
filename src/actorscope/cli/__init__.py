"""The ``actorscope`` command line (``actorscope --help``)."""

from actorscope.cli._app import app, main

__all__ = ["app", "main"]
