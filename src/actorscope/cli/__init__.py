"""The ``actorscope`` command line (``actorscope --help``)."""

from actorscope.cli._app import main

__all__ = ["main"]
