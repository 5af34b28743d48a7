"""The installed ``actorscope`` script names a grant's actor ``--sender`` / ``sender_id``.

``user_id`` means the scope everywhere, so ``grants add|remove`` take ``--sender`` (``--user`` is
gone, no alias) and ``grants list`` shows a ``sender_id`` column and JSON key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ACTORSCOPE = Path(sys.executable).parent / "actorscope"
GROUP = "group:telegram:-100200"
GRANT = ("--agent", "main", "--scope", GROUP, "--type", "cron")


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the console script with ``args`` in ``cwd`` (a wide terminal, stdin empty)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORSCOPE_")}
    env["COLUMNS"] = "200"
    return subprocess.run(  # noqa: S603 - our own console script, arguments from the test
        [str(ACTORSCOPE), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_grants_take_sender_and_show_sender_id(tmp_path: Path) -> None:
    """add/list/remove with --sender; list's JSON key and table column are sender_id."""
    assert run_cli("agents", "add", "main", "--db", "g.db", cwd=tmp_path).returncode == 0
    added = run_cli("grants", "add", "--db", "g.db", *GRANT, "--sender", "42", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert added.stdout == "allow cron for 42 in group:telegram:-100200 (agent main)\n"
    as_json = run_cli(
        "grants", "add", "--db", "g.db", *GRANT, "--sender", "42", "--json", cwd=tmp_path
    )
    assert json.loads(as_json.stdout)["sender_id"] == "42"
    listed = run_cli("grants", "list", "--db", "g.db", "--json", cwd=tmp_path)
    (row,) = json.loads(listed.stdout)
    assert (row["scope"], row["sender_id"]) == (GROUP, "42")
    assert "user_id" not in row
    table = run_cli("grants", "list", "--db", "g.db", cwd=tmp_path)
    assert "sender_id" in table.stdout
    assert "user_id" not in table.stdout
    removed = run_cli("grants", "remove", "--db", "g.db", *GRANT, "--sender", "42", cwd=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert (
        json.loads(run_cli("grants", "list", "--db", "g.db", "--json", cwd=tmp_path).stdout) == []
    )


def test_the_old_user_flag_is_gone(tmp_path: Path) -> None:
    """grants add|remove --user is typer's "No such option" (exit 2, one line), not an alias."""
    assert run_cli("agents", "add", "main", "--db", "g.db", cwd=tmp_path).returncode == 0
    for command in ("add", "remove"):
        result = run_cli("grants", command, "--db", "g.db", *GRANT, "--user", "42", cwd=tmp_path)
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr.startswith("actorscope: error: No such option: --user")
        assert result.stderr.count("\n") == 1
