"""The installed ``actorscope`` script names a grant's actor ``--sender`` / ``sender_id``.

``user_id`` means the scope everywhere, so ``grants add|remove`` take ``--sender`` (``--user`` is
gone, no alias) and ``grants list`` shows a ``sender_id`` column and JSON key.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

#: The ``run_cli`` fixture (tests/cli/conftest.py).
RunCli = Callable[..., subprocess.CompletedProcess[str]]
#: A wide terminal, so table cells are not folded.
WIDE = {"COLUMNS": "200"}

GROUP = "group:telegram:-100200"
GRANT = ("--agent", "main", "--scope", GROUP, "--type", "cron")


def test_grants_take_sender_and_show_sender_id(run_cli: RunCli, tmp_path: Path) -> None:
    """add/list/remove with --sender; list's JSON key and table column are sender_id."""
    assert (
        run_cli(
            "agents", "add", "main", "--db", "g.db", "--create", env=WIDE, cwd=tmp_path
        ).returncode
        == 0
    )
    added = run_cli(
        "grants", "add", "--db", "g.db", *GRANT, "--sender", "42", env=WIDE, cwd=tmp_path
    )
    assert added.returncode == 0, added.stderr
    assert added.stdout == "allow cron for 42 in group:telegram:-100200 (agent main)\n"
    as_json = run_cli(
        "grants", "add", "--db", "g.db", *GRANT, "--sender", "42", "--json", cwd=tmp_path
    )
    assert json.loads(as_json.stdout)["sender_id"] == "42"
    listed = run_cli("grants", "list", "--db", "g.db", "--json", env=WIDE, cwd=tmp_path)
    (row,) = json.loads(listed.stdout)
    assert (row["scope"], row["sender_id"]) == (GROUP, "42")
    assert "user_id" not in row
    table = run_cli("grants", "list", "--db", "g.db", env=WIDE, cwd=tmp_path)
    assert "sender_id" in table.stdout
    assert "user_id" not in table.stdout
    removed = run_cli(
        "grants", "remove", "--db", "g.db", *GRANT, "--sender", "42", env=WIDE, cwd=tmp_path
    )
    assert removed.returncode == 0, removed.stderr
    assert (
        json.loads(
            run_cli("grants", "list", "--db", "g.db", "--json", env=WIDE, cwd=tmp_path).stdout
        )
        == []
    )


def test_the_old_user_flag_is_gone(run_cli: RunCli, tmp_path: Path) -> None:
    """grants add|remove --user is typer's "No such option" (exit 2, one line), not an alias."""
    assert (
        run_cli(
            "agents", "add", "main", "--db", "g.db", "--create", env=WIDE, cwd=tmp_path
        ).returncode
        == 0
    )
    for command in ("add", "remove"):
        result = run_cli(
            "grants", command, "--db", "g.db", *GRANT, "--user", "42", env=WIDE, cwd=tmp_path
        )
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr.startswith("actorscope: error: No such option: --user")
        assert result.stderr.count("\n") == 1
