"""``actorscope serve``: the API and console under uvicorn, next to the configured bots.

The caller binds the listening socket (so a busy port is one clear error before anything
starts); :func:`serve` opens the database, assembles the ``[http]`` agent once (the
composition root), runs uvicorn on the socket with the app over that assembly and, when the
file has enabled bot sections, ``run_bots`` beside it on the same assembly (or, when the
bots' agent is another, that agent's, on the same database), until ``stop`` is set
(SIGINT / SIGTERM set it when ``handle_signals``).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import signal
import socket
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import AsyncExitStack

import uvicorn

from actorscope.agents import AgentRegistry
from actorscope.assembly import assemble
from actorscope.bots import (
    BotConfig,
    BotServices,
    HttpSection,
    load_handler,
    run_bots,
)
from actorscope.errors import ConfigError
from actorscope.http._app import create_app
from actorscope.http._gate import ConnectionGate
from actorscope.http._guard import ASGIApp, ForwardedFor
from actorscope.store import Database

__all__ = [
    "LISTEN_BACKLOG",
    "STARTUP_WAIT",
    "check_descriptors",
    "descriptors_needed",
    "gated",
    "running",
    "serve",
    "url_of",
]

#: Seconds uvicorn may take to start answering.
STARTUP_WAIT = 10.0
#: Connections the kernel queues for the server (they hold no descriptor of the process).
LISTEN_BACKLOG = HttpSection.LISTEN_BACKLOG
#: Descriptors kept for the database, the bots and the process beside the HTTP connections.
_RESERVED_DESCRIPTORS = 32
_TICK = 0.02


class _Server(uvicorn.Server):
    """uvicorn's server without its own signal handlers: :func:`serve` owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Install nothing (uvicorn's public hook; the caller's stop event ends the server)."""
        yield


def gated(app: ASGIApp, section: HttpSection) -> ConnectionGate:
    """``app`` behind the section's bounds: forwarded headers from its trusted proxies only,
    its connection limit and timeouts (:class:`~actorscope.http._gate.ConnectionGate`)."""
    inner: ASGIApp = app
    if section.trusted_proxies:
        inner = ForwardedFor(app, section.trusted_proxies)
    return ConnectionGate(
        inner,
        max_connections=section.max_connections,
        header_timeout=section.header_timeout,
    )


@contextlib.asynccontextmanager
async def running(
    app: ASGIApp, sock: socket.socket, section: HttpSection | None = None
) -> AsyncIterator[uvicorn.Server]:
    """``app`` under uvicorn on ``sock`` until the block ends; waits (bounded) until it answers.

    ``section`` gives the bounds (:func:`gated`; default: ``HttpSection()``'s). uvicorn's own
    proxy-header handling is off: it trusts 127.0.0.1, where ``serve`` listens. The server
    installs no signal handlers (its owner stops it); the block's exit stops it and waits up
    to :data:`STARTUP_WAIT` seconds for it to finish.
    """
    gate = gated(app, section or HttpSection())
    config = uvicorn.Config(
        gate,
        http=gate.protocol,
        backlog=gate.accept_batch,
        ws="none",
        proxy_headers=False,
        lifespan="off",
        log_level="warning",
    )
    server = _Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(int(STARTUP_WAIT / _TICK)):
            if server.started or serving.done():
                break
            await asyncio.sleep(_TICK)
        if not server.started:
            if serving.done() and serving.exception() is not None:
                raise ConfigError(f"the HTTP server did not start: {serving.exception()}")
            raise ConfigError(f"the HTTP server did not start within {STARTUP_WAIT:g}s")
        # asyncio listened with the accept batch as the backlog (it uses one number for both):
        # give the kernel its own queue back, so a burst of clients waits there, not refused.
        sock.listen(LISTEN_BACKLOG)
        yield server
    finally:
        server.should_exit = True
        await asyncio.wait({serving}, timeout=STARTUP_WAIT)


def url_of(sock: socket.socket) -> str:
    """``http://host:port`` of a listening socket."""
    host, port = sock.getsockname()[:2]
    return f"http://{host}:{port}" if ":" not in host else f"http://[{host}]:{port}"


def descriptors_needed(section: HttpSection) -> int:
    """File descriptors ``serve`` may hold: its connections, a burst of newly accepted ones
    the gate has not seen yet (a few accept batches), and a reserve for the database, the
    bots' connections and the process itself."""
    return section.max_connections + section.max_connections // 2 + _RESERVED_DESCRIPTORS


def check_descriptors(section: HttpSection, source: str = "") -> None:
    """One :class:`ConfigError` when ``max_connections`` does not fit the open-file limit."""
    allowed = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    needed = descriptors_needed(section)
    if allowed != resource.RLIM_INFINITY and needed > allowed:
        where = f"{source}: " if source else ""
        raise ConfigError(
            f"{where}http.max_connections = {section.max_connections} needs about {needed} open"
            f" files, but this process may open {allowed} (ulimit -n): lower max_connections"
            f" or raise the limit"
        )


async def serve(
    config: BotConfig,
    sock: socket.socket,
    *,
    out: Callable[[str], None] = print,
    stop: asyncio.Event | None = None,
    handle_signals: bool = True,
    env: Mapping[str, str] | None = None,
    source: str = "",
) -> None:
    """Serve the API and console on ``sock`` (and run the bots) until ``stop`` is set."""
    section = config.http
    if section is None:
        raise ConfigError(f"{source or 'the configuration'}: no [http] section")
    check_descriptors(section, source)
    handler = load_handler(section.handler, config.base_dir) if section.handler else None
    stop = stop if stop is not None else asyncio.Event()
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        signals = (signal.SIGINT, signal.SIGTERM) if handle_signals else ()
        for sig in signals:
            loop.add_signal_handler(sig, stop.set)
            stack.callback(loop.remove_signal_handler, sig)
        db = await stack.enter_async_context(Database.open(config.database))
        assembly = await assemble(db, config.agent_settings(agent=section.agent))
        agent = assembly.agent
        bound = None if handler is None else BotServices.of(assembly).wrap(handler)
        app = create_app(assembly, handler=bound, body_timeout=section.body_timeout)
        await stack.enter_async_context(running(app, sock, section))
        bots = None
        if config.sections():
            # One assembly for the API and the bots when they serve one agent (one grant
            # store, signer and workspace); another agent of the file is assembled for them.
            theirs = await AgentRegistry(db).ensure(config.agent, config.tenant)
            shared = (
                assembly if theirs.id == agent.id else await assemble(db, config.agent_settings())
            )
            bots = asyncio.create_task(
                run_bots(
                    config,
                    env=env,
                    out=out,
                    stop=stop,
                    handle_signals=False,
                    source=source,
                    assembly=shared,
                )
            )
        stopping = asyncio.create_task(stop.wait())
        try:
            where = url_of(sock)
            out(f"HTTP API on {where}/v1 (docs {where}/docs), console on {where}/console")
            target = f"agent {agent.key!r}" if handler is not None else "no handler (503)"
            out(f"messages go to {target}; Ctrl-C to stop")
            waiters: set[asyncio.Task[object]] = {stopping}
            if bots is not None:
                waiters.add(bots)
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.set()
            stopping.cancel()
            if bots is not None:
                await asyncio.wait({bots})
        failed = None if bots is None else bots.exception()
        if failed is not None:
            raise failed
    out("stopped")
