"""Run an example or the console script in a subprocess with scripted input, bounded."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Sequence
from pathlib import Path


async def run_process(
    args: Sequence[str],
    cwd: Path,
    stdin: str,
    *,
    seconds: float = 20.0,
    drop_env: Sequence[str] = (),
) -> tuple[int, str, str]:
    """Run ``args`` with ``stdin`` as its whole input (``seconds`` at most): status, stdout,
    stderr. No ``*_BOT_TOKEN`` variable (nor any in ``drop_env``) reaches it: never a real bot."""
    env = {
        k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN") and k not in drop_env
    }
    proc = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode()), seconds)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def interrupted(
    args: Sequence[str], cwd: Path, line: str, answered: bytes, *, seconds: float = 20.0
) -> tuple[int, str, str]:
    """Run ``args``, type ``line``, wait until stdout shows ``answered`` (each read bounded by
    ``seconds``), then press Ctrl-C (SIGINT): status, all of stdout, stderr. No
    ``*_BOT_TOKEN`` variable reaches it."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    proc = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write(line.encode() + b"\n")
        await proc.stdin.drain()
        seen = b""
        for _ in range(200):  # bounded: the banner and help, then the bot's answer
            read = await asyncio.wait_for(proc.stdout.readline(), seconds)
            seen += read
            if not read or answered in read:
                break
        assert answered in seen, seen.decode()
        proc.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(proc.communicate(), seconds)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, (seen + out).decode(), err.decode()
