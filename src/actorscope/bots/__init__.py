"""Running bots: the ``actorscope run`` configuration, runtime, handler services and prompt."""

from actorscope.bots.app import SHUTDOWN_GRACE, run_bots, with_services
from actorscope.bots.config import (
    BotConfig,
    ChannelSection,
    load_bot_config,
    load_handler,
    resolve_token,
)
from actorscope.bots.services import BotServices, bind_services, current_services
from actorscope.bots.terminal import run_in_terminal

__all__ = [
    "SHUTDOWN_GRACE",
    "BotConfig",
    "BotServices",
    "ChannelSection",
    "bind_services",
    "current_services",
    "load_bot_config",
    "load_handler",
    "resolve_token",
    "run_bots",
    "run_in_terminal",
    "with_services",
]
