"""Another process holding an SQLite database's lock, for tests of how the store waits."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

#: Holds the write lock of the database at argv[1] from "locked" until a line on stdin;
#: argv[2] "exclusive" takes it in exclusive locking mode (no reader either).
LOCKER = """\
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
if sys.argv[2] == "exclusive":
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute("BEGIN EXCLUSIVE")
else:
    conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE tenants SET name = name")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


@asynccontextmanager
async def sqlite_locked(
    path: Path, *, exclusive: bool = False
) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """Another process holds ``path``'s write lock from entry until the block ends or the
    yielded ``release()`` is awaited, whichever is first; the block's end waits for it to
    let go."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        LOCKER,
        str(path),
        "exclusive" if exclusive else "write",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin = proc.stdin

    async def release() -> None:
        if not stdin.is_closing():
            stdin.write(b"release\n")
            await stdin.drain()
            stdin.close()

    try:
        assert await asyncio.wait_for(proc.stdout.readline(), 20) == b"locked\n"
        yield release
    finally:
        await release()
        await asyncio.wait_for(proc.wait(), 20)
