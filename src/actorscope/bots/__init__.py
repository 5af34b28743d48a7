"""Running bots: the ``actorscope run`` configuration, runtime, handler services and prompt."""

from actorscope.bots._app import SHUTDOWN_GRACE, run_bots, with_services
from actorscope.bots._config import (
    AuditSection,
    BotConfig,
    HttpSection,
    ProbeSection,
    load_bot_config,
    load_handler,
    load_object,
    resolve_token,
)
from actorscope.bots._services import BotServices, bind_services, current_services
from actorscope.bots._terminal import run_in_terminal

__all__ = [
    "SHUTDOWN_GRACE",
    "AuditSection",
    "BotConfig",
    "BotServices",
    "HttpSection",
    "ProbeSection",
    "bind_services",
    "current_services",
    "load_bot_config",
    "load_handler",
    "load_object",
    "resolve_token",
    "run_bots",
    "run_in_terminal",
    "with_services",
]
