"""A throwaway PostgreSQL cluster for one soak run, as ``.ci/run`` starts one.

``initdb`` into a temporary directory, ``pg_ctl start`` on 127.0.0.1 and a port of its own
(never the shared test server's), trust authentication, fsync off (the data is thrown away).
As root the server runs as the packages' ``postgres`` user (PostgreSQL refuses root). The
soak restarts it as a fault, terminates its LISTEN connections, and reads the database size.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import asyncpg

__all__ = ["Cluster", "ClusterError", "find_bindir"]

#: Seconds any pg_ctl step may take.
_STEP_TIMEOUT = 60.0
_DATABASE = "soak"


class ClusterError(Exception):
    """The cluster could not be set up or controlled (one line saying why)."""


def find_bindir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` with ``initdb``, if any."""
    root = Path("/usr/lib/postgresql")
    found = sorted(
        (path for path in root.glob("*/bin") if (path / "initdb").exists()),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


def _as_postgres(command: Sequence[str]) -> list[str]:
    """``command`` run as the ``postgres`` user when we are root (PostgreSQL refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return list(command)


async def _run(command: Sequence[str], what: str) -> None:
    process = await asyncio.create_subprocess_exec(
        *_as_postgres(command), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), _STEP_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise ClusterError(f"{what} took longer than {_STEP_TIMEOUT:g}s") from None
    if process.returncode != 0:
        text = output.decode(errors="replace").strip().splitlines()
        raise ClusterError(f"{what} failed: {text[-1] if text else process.returncode}")


class Cluster:
    """One PostgreSQL server on ``127.0.0.1:port`` with a ``soak`` database."""

    def __init__(self, bindir: Path, port: int) -> None:
        self.bindir = bindir
        self.port = port
        self._dir: Path | None = None

    @property
    def data(self) -> Path:
        """The data directory (exists between :meth:`start` and :meth:`remove`)."""
        if self._dir is None:
            raise ClusterError("the cluster is not set up")
        return self._dir / "data"

    def url(self, database: str = _DATABASE, *, port: int | None = None) -> str:
        """A URL of ``database`` (through ``port`` when given: a worker's proxy)."""
        return f"postgresql://postgres@127.0.0.1:{port or self.port}/{database}"

    async def start(self) -> None:
        """initdb, start the server and create the soak database."""
        self._dir = Path(tempfile.mkdtemp(prefix="actorscope-soak-pg."))
        if os.geteuid() == 0:
            shutil.chown(self._dir, "postgres")
        await _run(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
            ],
            "initdb",
        )
        await self._ctl_start()
        conn = await self.admin()
        try:
            await conn.execute(f"CREATE DATABASE {_DATABASE}")
        finally:
            await conn.close()

    async def _ctl_start(self) -> None:
        assert self._dir is not None
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self._dir} -c fsync=off "
            "-c max_connections=300 -c log_min_messages=warning"
        )
        await _run(
            [
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self._dir / "server.log"),
                "-s",
                "-w",
                "-t",
                str(int(_STEP_TIMEOUT)),
                "-o",
                options,
                "start",
            ],
            "pg_ctl start",
        )

    async def restart(self) -> None:
        """Stop (fast: every connection is cut) and start again; returns once it answers."""
        await _run(
            [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-s", "-w", "-m", "fast", "stop"],
            "pg_ctl stop",
        )
        await self._ctl_start()

    async def admin(self, database: str = "postgres") -> asyncpg.Connection:
        """A superuser connection (the caller closes it)."""
        return await asyncpg.connect(self.url(database), timeout=10)

    async def terminate_listeners(self) -> int:
        """Terminate every actorscope LISTEN connection; how many there were."""
        conn = await self.admin()
        try:
            rows = await conn.fetch(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'actorscope-listen'"
            )
        finally:
            await conn.close()
        return len(rows)

    async def database_size(self) -> int:
        """Bytes the soak database takes on disk."""
        conn = await self.admin()
        try:
            return int(await conn.fetchval("SELECT pg_database_size($1)", _DATABASE))
        finally:
            await conn.close()

    async def table_sizes(self) -> dict[str, tuple[int, int]]:
        """``{table: (rows, bytes)}`` of the soak database's tables (rows estimated exactly)."""
        conn = await self.admin(_DATABASE)
        try:
            names = [
                row["relname"]
                for row in await conn.fetch(
                    "SELECT relname FROM pg_stat_user_tables ORDER BY relname"
                )
            ]
            sizes = {}
            for name in names:
                rows = await conn.fetchval(f'SELECT count(*) FROM "{name}"')
                size = await conn.fetchval("SELECT pg_total_relation_size($1::regclass)", name)
                sizes[name] = (int(rows), int(size))
            return sizes
        finally:
            await conn.close()

    async def stop(self) -> None:
        """Stop the server at once and remove its files; safe to call twice."""
        if self._dir is None:
            return
        if self.data.exists():
            # Not running (a failed start): the files go anyway.
            with contextlib.suppress(ClusterError):
                await _run(
                    [
                        str(self.bindir / "pg_ctl"),
                        "-D",
                        str(self.data),
                        "-s",
                        "-m",
                        "immediate",
                        "stop",
                    ],
                    "pg_ctl stop",
                )
        shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = None
