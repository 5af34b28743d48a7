"""Project-wide test configuration: pytester, and the database backends tests run against.

``db_target`` is where a test's database lives, once per backend (``backend``): an SQLite
file under ``tmp_path``, and a fresh schema in a PostgreSQL database created for this test
session on the server at ``ACTORSCOPE_TEST_POSTGRES_URL`` (default
``postgresql://postgres@127.0.0.1:54329/postgres``). Without a reachable server the
PostgreSQL cases are deselected and the report header says why, once; with
``ACTORSCOPE_REQUIRE_POSTGRES=1`` (CI) they run and fail instead.

``db`` is a fresh migrated database at ``db_target``, with ``agent`` (``main``) and a
``store`` of grants over it: the one ``db`` of the suite. A module whose subject is not the
dialect says so with ``pytestmark = pytest.mark.sqlite_only("why")`` (its ``db`` is then
SQLite alone); a database that really is different has a name of its own (``sqlite_db`` in
tests/store/test_database.py, ``memory_db`` in tests/tools/test_builtin_memory.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import uvicorn
from tests._wait import wait_until

from actorscope.agents import Agent, AgentRegistry
from actorscope.permissions import GrantStore
from actorscope.store import Database

pytest_plugins = ["pytester"]

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:54329/postgres"
BACKENDS = ("sqlite", "postgresql")
#: (cases deselected, why) when the PostgreSQL suite cannot run here.
_SKIPPED_POSTGRES = pytest.StashKey[tuple[int, str]]()


def _with_database(url: str, name: str, query: str = "") -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", query, ""))


async def _statements(url: str, statements: tuple[str, ...]) -> None:
    import asyncpg

    conn = await asyncpg.connect(url, timeout=5)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


def _admin(url: str, *statements: str) -> None:
    """Run ``statements`` on ``url`` in a thread of its own (any test's event loop stays as is)."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _statements(url, statements)).result(timeout=60)


def _server_url() -> str:
    return os.environ.get("ACTORSCOPE_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)


def _required() -> bool:
    return os.environ.get("ACTORSCOPE_REQUIRE_POSTGRES") == "1"


def _unusable_reason(server: str, exc: Exception) -> str:
    where = urlsplit(server).netloc.rpartition("@")[2]
    return f"no PostgreSQL server usable at {where} ({type(exc).__name__}: {exc})"


def _uses_postgres(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("backend") == "postgresql":
        return True
    return "postgres_url" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without a usable server (and not required to have one), drop the PostgreSQL cases once."""
    wanted = [item for item in items if _uses_postgres(item)]
    if not wanted or _required():
        return
    server = _server_url()
    try:
        _admin(server, "SELECT 1")
    except Exception as exc:  # any reason the server cannot be used: say which, once
        reason = _unusable_reason(server, exc)
        config.stash[_SKIPPED_POSTGRES] = (len(wanted), reason)
        kept = [item for item in items if not _uses_postgres(item)]
        config.hook.pytest_deselected(items=wanted)
        items[:] = kept


def pytest_report_collectionfinish(config: pytest.Config) -> str | None:
    """Say once why the PostgreSQL suite did not run."""
    skipped = config.stash.get(_SKIPPED_POSTGRES, None)
    if skipped is None:
        return None
    count, reason = skipped
    return (
        f"PostgreSQL suite not run ({count} cases deselected): {reason}; "
        "set ACTORSCOPE_TEST_POSTGRES_URL to run it"
    )


@pytest.fixture(scope="session")
def postgres_server_url() -> str:
    """The PostgreSQL server (and maintenance database) the tests may use."""
    return _server_url()


@pytest.fixture(scope="session")
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """A PostgreSQL database created for this session (dropped after it); skip if no server."""
    server = postgres_server_url
    name = f"actorscope_test_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        _admin(server, f'CREATE DATABASE "{name}"')
    except Exception as exc:  # any reason the server cannot be used: say which
        reason = _unusable_reason(server, exc)
        if _required():
            pytest.fail(f"{reason}; ACTORSCOPE_REQUIRE_POSTGRES=1 forbids skipping")
        pytest.skip(f"{reason}; set ACTORSCOPE_TEST_POSTGRES_URL to run the PostgreSQL suite")
    try:
        yield _with_database(server, name)
    finally:
        _admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pytest_configure(config: pytest.Config) -> None:
    """Register ``sqlite_only``."""
    config.addinivalue_line(
        "markers",
        "sqlite_only(why): this test's database (``backend``, ``db``) is SQLite only, for why",
    )


def _chooses_backend(metafunc: pytest.Metafunc) -> bool:
    """Whether the test parametrizes ``backend`` itself (``@pytest.mark.parametrize``)."""
    marks = metafunc.definition.iter_markers("parametrize")
    return any("backend" in (mark.args[0] if mark.args else ()) for mark in marks)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``backend`` is each of ``BACKENDS``, or SQLite alone for a test marked ``sqlite_only``."""
    if "backend" not in metafunc.fixturenames or _chooses_backend(metafunc):
        return
    only = metafunc.definition.get_closest_marker("sqlite_only")
    if only is not None and not only.args:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: sqlite_only(why) needs its why")
    metafunc.parametrize("backend", ("sqlite",) if only else BACKENDS, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The database backend of this test case: ``sqlite`` or ``postgresql``."""
    return str(request.param)


@pytest.fixture
def db_target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """What to pass to ``Database.open`` for a fresh, empty database of ``backend``."""
    if backend == "sqlite":
        return str(tmp_path / "t.db")
    url: str = request.getfixturevalue("postgres_url")
    schema = f"t_{secrets.token_hex(6)}"
    _admin(url, f"CREATE SCHEMA {schema}")
    return _with_database(url, urlsplit(url).path.lstrip("/"), f"search_path={schema}")


@pytest.fixture
async def db(db_target: str) -> AsyncIterator[Database]:
    """A fresh migrated database."""
    async with Database.open(db_target) as database:
        yield database


@pytest.fixture
async def agent(db: Database) -> Agent:
    """The agent ``main`` of the default tenant."""
    return await AgentRegistry(db).create("main")


@pytest.fixture
def store(db: Database) -> GrantStore:
    """A grant store over the database."""
    return GrantStore(db)


#: ``async with serve(server) as port:`` runs a uvicorn server on a loopback port of its own.
ServeOnLoopback = Callable[[uvicorn.Server], AbstractAsyncContextManager[int]]


@contextlib.asynccontextmanager
async def _on_loopback(server: uvicorn.Server) -> AsyncIterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            # uvicorn offers a flag, not an event: poll it, 10 s at most.
            await wait_until(lambda: server.started, 10)
            yield int(sock.getsockname()[1])
        finally:
            server.should_exit = True
            async with asyncio.timeout(10):
                await task


@pytest.fixture
def serve_on_loopback() -> ServeOnLoopback:
    """Run a configured uvicorn server on a free 127.0.0.1 port for a block; yields the port."""
    return _on_loopback
