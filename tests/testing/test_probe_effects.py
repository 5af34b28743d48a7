"""What the probe compares: a bot's effects without ids, times and the probe's people."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from actorscope.testing._probe_effects import (
    Behaviour,
    CallLog,
    FolderWatch,
    Watch,
    api_call,
    normalised,
)


def test_ids_times_and_people_are_left_out_of_a_call() -> None:
    """Keys naming ids or times go (and what they leave empty); long digit runs and the probe's
    people's names become placeholders; the writer's and a member's replies compare equal."""
    writer = {
        "chat_id": -1001000000001,
        "text": "saved by writer (4242)",
        "reply_parameters": {"message_id": 7},
        "date": 1700000000,
        "entities": [],
    }
    member = {**writer, "chat_id": -1001000000002, "text": "saved by member (6161)"}
    names = ("writer", "member")
    assert normalised(writer, names) == {"text": "saved by <someone> (#)"}
    assert api_call("sendMessage", writer, names) == api_call("sendMessage", member, names)
    assert normalised("writers: 4242", names) == "writers: #"  # a whole word only


def test_a_behaviour_covers_the_writers_only_when_it_has_all_of_it() -> None:
    """Every effect of the writer's, and the writer's did something; described shortly."""
    writer = Behaviour(frozenset({"a", "b"}))
    assert Behaviour(frozenset({"a", "b", "c"})).covers(writer)
    assert not Behaviour(frozenset({"a"})).covers(writer)
    assert not Behaviour(frozenset()).covers(Behaviour())
    many = Behaviour(frozenset({"x" * 200, "b", "c", "d"}))
    assert many.describe().endswith("and 1 more")
    assert "…" in Behaviour(frozenset({"x" * 200})).describe()
    assert Behaviour().describe() == "nothing"


def test_a_call_log_gives_the_effects_after_its_mark() -> None:
    """Calls after the mark, reads left out; no mark means every call."""
    calls: list[object] = ["get", "one"]
    log = CallLog(lambda: calls, lambda c: None if c == "get" else f"call {c}")
    assert log.since(None) == ["call one"]
    mark = log.mark()
    calls.extend(["get", "two"])
    assert log.since(mark) == ["call two"]
    assert CallLog(list, str).mark() is None


def test_files_and_sqlite_rows_under_the_folder_are_watched(tmp_path: Path) -> None:
    """A file created or changed is written, a removed one deleted; rows added, removed or
    changed in a table of a SQLite database there are said per table; the ignored database,
    sidecars and actorscope's own marker are not effects."""
    (tmp_path / "own.db").write_bytes(b"SQLite format 3\x00 ignored")
    (tmp_path / "gone.txt").write_text("x", "utf-8")
    db_path = tmp_path / "notes.sqlite"
    with closing(sqlite3.connect(db_path)) as db, db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("CREATE TABLE tags (text TEXT)")
        db.execute("CREATE TABLE kept (text TEXT)")
        db.executemany("INSERT INTO tags VALUES (?)", [("old",)])
        db.executemany("INSERT INTO kept VALUES (?)", [("k",)])
    calls: list[object] = []
    watch = Watch(CallLog(lambda: calls, str), FolderWatch(tmp_path, ignore=[tmp_path / "own.db"]))
    watch.begin()
    (tmp_path / "chat_-1001000000001").mkdir()
    (tmp_path / "chat_-1001000000001" / "notes.md").write_text("- a\n", "utf-8")
    (tmp_path / "chat_-1001000000001" / ".agent.json").write_text("{}", "utf-8")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "own.db").write_bytes(b"SQLite format 3\x00 changed")
    with closing(sqlite3.connect(db_path)) as db, db:
        db.execute("INSERT INTO notes VALUES ('a')")
        db.execute("UPDATE tags SET text = 'new'")
        db.execute("DELETE FROM kept")
    calls.append("sendMessage")
    assert watch.end().effects == {
        "sendMessage",
        "file chat_#/notes.md written",
        "file gone.txt deleted",
        "sqlite notes.sqlite:notes: rows added",
        "sqlite notes.sqlite:tags: rows changed",
        "sqlite notes.sqlite:kept: rows removed",
    }


def test_an_unreadable_database_is_said_not_raised(tmp_path: Path) -> None:
    """A file with SQLite's header that is no database: one (unreadable) entry, no traceback."""
    (tmp_path / "broken.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    folder = FolderWatch(tmp_path).snapshot()
    [key] = folder.tables
    assert key == "broken.db:(unreadable)"
