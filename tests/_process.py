"""Run an example or the console script in a subprocess with scripted input, bounded."""

from __future__ import annotations

import asyncio
import os
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
