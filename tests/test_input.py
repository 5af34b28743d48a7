"""Bounded reads of input files (actorscope._input): limits hold exactly, pipes still work."""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path

import pytest

from actorscope._input import (
    MAX_INTEGER_DIGITS,
    MAX_JSON_DEPTH,
    NIL_UUID,
    InvalidUUIDError,
    is_uuid,
    key_path,
    parse_json,
    parse_toml,
    parse_uuid,
    parse_uuid_or_nil,
    read_text_file,
    shown_path,
    toml_line,
)
from actorscope.errors import ConfigError, PayloadError


def test_read_stops_at_the_limit_and_says_it(tmp_path: Path) -> None:
    """A file one byte over the limit is refused naming the limit; one at the limit is read."""
    path = tmp_path / "f.json"
    path.write_bytes(b"x" * 10)
    assert read_text_file(path, PayloadError, limit=10) == "x" * 10
    with pytest.raises(PayloadError, match="larger than the 9-byte limit"):
        read_text_file(path, PayloadError, limit=9)


def test_fifo_without_writer_reads_empty_instead_of_blocking(tmp_path: Path) -> None:
    """Opening a FIFO nobody writes to returns "" at once (the caller then reports bad input)."""
    os.mkfifo(tmp_path / "fifo")
    assert read_text_file(tmp_path / "fifo", PayloadError) == ""


def test_pipe_with_a_writer_is_read_to_its_end() -> None:
    """A pipe is read in blocking mode after the open, so a slow writer's data all arrives."""
    read_end, write_end = os.pipe()

    def writer() -> None:
        with os.fdopen(write_end, "wb") as handle:
            handle.write(b'{"a": ')
            handle.flush()
            handle.write(b"1}")

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        text = read_text_file(Path(f"/dev/fd/{read_end}"), PayloadError)
    finally:
        thread.join(timeout=10)
        os.close(read_end)
    assert text == '{"a": 1}'


def test_unreadable_paths_raise_the_callers_error(tmp_path: Path) -> None:
    """A directory, a missing file and bad UTF-8 each raise the given class, naming the file."""
    with pytest.raises(ConfigError, match="cannot read: Is a directory"):
        read_text_file(tmp_path, ConfigError)
    with pytest.raises(ConfigError, match=r"'nope\.toml': cannot read: No such file"):
        read_text_file(Path("nope.toml"), ConfigError)
    (tmp_path / "b.toml").write_bytes(b"a = 1\n\xc3")
    with pytest.raises(ConfigError, match=r"not UTF-8 text \(byte 6\)"):
        read_text_file(tmp_path / "b.toml", ConfigError)


def test_json_depth_limit_is_exact() -> None:
    """MAX_JSON_DEPTH levels parse; one more is refused before the parser recurses."""
    deepest = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert parse_json(deepest, "f", PayloadError) is not None
    with pytest.raises(PayloadError, match=f"limit of {MAX_JSON_DEPTH} levels"):
        parse_json("{" * 5 + deepest + "}" * 5, "f", PayloadError)


def test_brackets_inside_json_strings_do_not_count() -> None:
    """Brackets in strings (escaped quotes included) are text, not nesting."""
    text = '{"a": "' + "[{" * 500 + '\\" ]]", "b": ["x"]}'
    assert parse_json(text, "f", PayloadError)["b"] == ["x"]


def test_unterminated_string_full_of_escaped_quotes_is_fast() -> None:
    """An unterminated string of escaped quotes is scanned once, then reported as bad JSON."""
    with pytest.raises(PayloadError, match="not valid JSON"):
        parse_json('"' + '\\"' * 200_000, "f", PayloadError)


def test_json_integer_digit_limit_is_exact() -> None:
    """An integer of MAX_INTEGER_DIGITS digits (signed too) parses; one digit more is refused."""
    most = "9" * MAX_INTEGER_DIGITS
    assert parse_json(f"[-{most}]", "f", PayloadError) == [-int(most)]
    with pytest.raises(PayloadError, match=f"longer than {MAX_INTEGER_DIGITS} digits"):
        parse_json(f"[{most}9]", "f", PayloadError)


def test_toml_failures_are_one_clear_error() -> None:
    """Bad TOML, deep nesting and an over-long integer each raise the caller's error."""
    with pytest.raises(ConfigError, match=r"'c\.toml': not valid TOML: Invalid"):
        parse_toml("a = ", "c.toml", ConfigError)
    with pytest.raises(ConfigError, match="nested too deeply"):
        parse_toml("a = " + "[" * 5000 + "]" * 5000, "c.toml", ConfigError)
    with pytest.raises(ConfigError, match="an integer is longer than"):
        parse_toml("a = " + "1" * 5000, "c.toml", ConfigError)
    assert parse_toml("a = 0x" + "f" * 5000, "c.toml", ConfigError)["a"] > 0


def test_shown_path_quotes_escapes_and_shortens() -> None:
    """Paths are quoted with newlines escaped; over-long ones are cut with their length."""
    assert shown_path("a\nb.json") == "'a\\nb.json'"
    shown = shown_path("x" * 1000)
    assert shown.endswith("… (1000 characters)")
    assert len(shown) < 100


TOML_LINES = """\
handler = "m:f"
a.b = 1
[telegram]   # the bot
port = 1
"quoted key" = 2
[telegram.groups."-100"]
policy = "open"
[[probe]]
commands = []
"""


@pytest.mark.parametrize(
    ("loc", "line"),
    [
        (("handler",), 1),
        (("telegram",), 3),
        (("telegram", "port"), 4),
        (("telegram", "quoted key"), 5),
        (("telegram", "missing"), 3),
        (("telegram", "groups", "-100", "policy"), 7),
        (("telegram", "groups", "-100", "allow_from", 0), 6),
        (("probe", "commands"), 9),
        (("a", "b"), None),
        (("http", "port"), None),
    ],
)
def test_toml_line_finds_the_key_or_its_table(loc: tuple[str | int, ...], line: int | None) -> None:
    """The line of a key, else of its nearest written table; None when neither is written."""
    assert toml_line(TOML_LINES, loc) == line


def test_toml_line_skips_keys_inside_multi_line_strings() -> None:
    """A `strict = 1` line inside a triple-quoted value is text: the real key's line wins."""
    text = "note = \"\"\"\nstrict = 1\n\"\"\"\nother = '''\nstrict = 2\n'''\nstrict = 3\n"
    assert toml_line(text, ("strict",)) == 7
    assert toml_line('a = """one line"""\nstrict = 1\n', ("strict",)) == 2


def test_key_path_quotes_what_is_not_a_bare_key() -> None:
    """List indexes go in brackets; a key TOML must quote is quoted."""
    assert key_path(("telegram", "groups", "-100", "allow_from", 0)) == (
        "telegram.groups.-100.allow_from[0]"
    )
    assert key_path(("http", "a b")) == 'http."a b"'


# --- UUID text ---------------------------------------------------------------------------


def test_parse_uuid_raises_and_parse_uuid_or_nil_does_not() -> None:
    """parse_uuid names what is wrong; parse_uuid_or_nil means "no match"."""
    with pytest.raises(InvalidUUIDError, match="agent id"):
        parse_uuid("bot", "agent id")
    assert parse_uuid_or_nil("bot") == NIL_UUID


def test_is_uuid_is_canonical_unless_told_otherwise() -> None:
    """An uppercase UUID is a UUID only with canonical=False; a key or a bare hex never is."""
    value = str(uuid.uuid4())
    assert is_uuid(value)
    assert is_uuid(value, canonical=False)
    assert not is_uuid(value.upper())
    assert is_uuid(value.upper(), canonical=False)
    for other in ("main", value.replace("-", ""), f"{{{value}}}", None, 7):
        assert not is_uuid(other)
        assert not is_uuid(other, canonical=False)
