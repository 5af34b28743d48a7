"""Running bots: the ``actorscope run`` configuration, runtime, handler services and prompt."""

from actorscope.bots._app import run_bots
from actorscope.bots._config import (
    BotConfig,
    HttpSection,
    ProbeSection,
    load_handler,
    load_object,
)
from actorscope.bots._services import BotServices
from actorscope.bots._terminal import run_in_terminal

__all__ = [
    "BotConfig",
    "BotServices",
    "HttpSection",
    "ProbeSection",
    "load_handler",
    "load_object",
    "run_bots",
    "run_in_terminal",
]
