"""bot.toml as one model: every problem one line with its key path and line, env overrides."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.fakechat import PLATFORM, SPEC, FakeChatSection

from actorscope.bots import BotConfig, run_bots
from actorscope.bots._config import _platform_sections, resolve_token
from actorscope.channels import ChannelSection, platform
from actorscope.channels.discord import DiscordSection
from actorscope.channels.telegram import TelegramSection
from actorscope.cli import main
from actorscope.errors import ConfigError
from actorscope.platforms import IdForm, PlatformSpec, register

HANDLER = 'handler = "mybot:handle"\n'
TELEGRAM = '[telegram]\ntoken_env = "AS_TEST_TELEGRAM_TOKEN"\n'
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def write_config(tmp_path: Path, text: str) -> Path:
    """``bot.toml`` (and the handler module ``mybot.py``) in ``tmp_path``."""
    (tmp_path / "mybot.py").write_text("async def handle(request):\n    return None\n")
    path = tmp_path / "bot.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            HANDLER + "colour = 1\n" + TELEGRAM, ["2: colour: unknown key"], id="unknown-key"
        ),
        pytest.param(
            HANDLER + TELEGRAM + "dm_policy = 3\n",
            ["4: telegram.dm_policy: Input should be 'open', 'allowlist' or 'disabled', got 3"],
            id="wrong-type",
        ),
        pytest.param(
            HANDLER + TELEGRAM + '[http]\nport = "80"\n',
            ["5: http.port: must be an integer from 0 to 65535, got '80'"],
            id="wrong-type-port",
        ),
        pytest.param(
            HANDLER
            + TELEGRAM
            + 'mode = "webhook"\nwebhook_url = "http://bots.example.com/tg"\n'
            + 'secret_token_env = "S"\nport = 8081\n',
            ["5: telegram.webhook_url: must be an https:// URL, got 'http://bots.example.com/tg'"],
            id="bad-webhook-url",
        ),
        pytest.param(
            HANDLER + TELEGRAM + 'mode = "webhook"\nport = 8081\n',
            ['2: telegram: mode = "webhook" needs webhook_url (the public https URL)'],
            id="webhook-without-url",
        ),
        pytest.param(
            HANDLER + '[discord]\ntoken_env = "D"\nshard_count = 4\nshard_ids = [0, 4]\n',
            ["5: discord.shard_ids: entry 4 is not a shard of shard_count = 4 (0 to 3)"],
            id="shard-id-out-of-range",
        ),
        pytest.param(
            HANDLER + TELEGRAM + '[telegram.groups."-100"]\npolicy = "closed"\n',
            [
                "5: telegram.groups.-100.policy: Input should be 'open', 'allowlist' or "
                "'disabled', got 'closed'"
            ],
            id="nested-table",
        ),
        pytest.param(
            HANDLER + "owners = ['@bob']\n" + TELEGRAM,
            [
                "2: owners[0] = '@bob' is a username; use the numeric sender id instead, "
                "because usernames change hands"
            ],
            id="owner-username",
        ),
        pytest.param(
            HANDLER + "owners = {a = 1}\n" + TELEGRAM,
            ["2: owners: must be a list of numeric sender ids"],
            id="owners-not-a-list",
        ),
        pytest.param(
            HANDLER + "telegram = 5\n",
            ["2: telegram: must be a table"],
            id="section-not-a-table",
        ),
        pytest.param(
            'agent = "bad key!"\n' + HANDLER + TELEGRAM + "[telegram.groups]\nx = 1\n",
            [
                "1: agent: agent key must be 1-64 letters, digits, '_' or '-' (starting with "
                "a letter or digit), got 'bad key!'",
                "5: telegram.groups: groups key 'x' is not a numeric chat or guild id",
            ],
            id="two-problems-two-lines",
        ),
        pytest.param(
            'base_dir = "/etc"\n' + HANDLER + TELEGRAM,
            ["1: base_dir: unknown key (paths are relative to the file's directory)"],
            id="base-dir-is-not-a-key",
        ),
        pytest.param(
            HANDLER + TELEGRAM + 'require_mention = "off"\nignore_bots = 0\n',
            [
                "4: telegram.require_mention: must be true or false, got 'off'",
                "5: telegram.ignore_bots: must be true or false, got 0",
            ],
            id="flags-are-true-or-false",
        ),
        pytest.param(
            HANDLER + TELEGRAM + "port = 1979-05-27\nrequire_mention = '" + "x" * 5000 + "'\n",
            [
                "4: telegram.port: must be an integer from 0 to 65535, got a date or time",
                "5: telegram.require_mention: must be true or false, got '" + "x" * 58 + "…",
            ],
            id="values-shown-short-and-typeless",
        ),
        pytest.param(TELEGRAM, [": handler: missing (module:function)"], id="missing-handler"),
        pytest.param(
            HANDLER + TELEGRAM + '[identity]\nlinks = "all"\n',
            ["5: identity.links: Input should be 'off', 'dm' or 'grants', got 'all'"],
            id="links-mode",
        ),
    ],
)
def test_bad_files_are_one_config_error_with_key_paths_and_lines(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    """Each problem is one line: file:line, the TOML key path, what is wrong (nothing Pythonic)."""
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        BotConfig.load(path)
    separator = "" if expected[0].startswith(":") else ":"
    assert str(caught.value).splitlines() == [f"{path}{separator}{line}" for line in expected]


def test_bad_toml_syntax_names_its_line(tmp_path: Path) -> None:
    """A file that is not TOML is one error naming the line and column."""
    path = write_config(tmp_path, HANDLER + "[telegram\n")
    with pytest.raises(ConfigError) as caught:
        BotConfig.load(path)
    assert str(caught.value) == (
        f"{str(path)!r}: not valid TOML: Expected ']' at the end of a table declaration "
        "(at line 2, column 10)"
    )


def test_missing_token_is_one_error_naming_the_variable(tmp_path: Path) -> None:
    """An unset token variable is named with its section (the token itself never is)."""
    telegram = BotConfig.load(write_config(tmp_path, HANDLER + TELEGRAM)).section("telegram")
    assert telegram is not None
    with pytest.raises(ConfigError) as caught:
        resolve_token(telegram, {}, "bot.toml")
    assert str(caught.value) == (
        "bot.toml: telegram: environment variable AS_TEST_TELEGRAM_TOKEN is not set (the bot token)"
    )


def test_run_with_a_bad_file_prints_one_line_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`actorscope run bad.toml`: exactly one stderr line with the key path, exit 2."""
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    path = write_config(tmp_path, HANDLER + TELEGRAM + "port = 70000\n")
    assert main(["run", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"actorscope: error: {path}:4: telegram.port: must be an integer from 0 to 65535, "
        "got 70000\n"
    )


def test_run_with_two_problems_prints_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two problems in the file: two `actorscope: error:` lines, each with its key path."""
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    path = write_config(tmp_path, "bogus = 1\n" + HANDLER + TELEGRAM + "port = 70000\n")
    assert main(["run", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"actorscope: error: {path}:1: bogus: unknown key",
        f"actorscope: error: {path}:5: telegram.port: must be an integer from 0 to 65535, "
        "got 70000",
    ]


STRICT_HANDLER = """
from pathlib import Path

from actorscope.bots import BotServices


async def handle(request):
    Path(__file__).with_name("strict.txt").write_text(str(BotServices.current().policy.strict))
    return "seen"
"""


async def lines_of(*lines: str) -> AsyncIterator[str]:
    """An in-memory sandbox prompt input."""
    for line in lines:
        yield line + "\n"


@pytest.mark.parametrize(("setting", "strict"), [("", False), ("strict = true\n", True)])
async def test_strict_makes_run_build_a_fail_closed_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, strict: bool
) -> None:
    """strict = true: the handler's PermissionPolicy denies when the grant store fails."""
    monkeypatch.delitem(sys.modules, "strictbot", raising=False)
    (tmp_path / "strictbot.py").write_text(STRICT_HANDLER)
    path = tmp_path / "bot.toml"
    path.write_text(setting + 'handler = "strictbot:handle"\ndatabase = "bot.db"\n' + TELEGRAM)
    config = BotConfig.load(path)
    assert config.strict is strict
    printed: list[str] = []
    lines = lines_of("/as bob hello", "/quit")
    async with asyncio.timeout(20):
        await run_bots(config, sandbox=True, out=printed.append, lines=lines)
    assert (tmp_path / "strict.txt").read_text() == str(strict), printed


def test_environment_wins_over_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ACTORSCOPE_<KEY> / ACTORSCOPE_<SECTION>__<KEY> override the file; other keys stay."""
    text = (
        'strict = false\ndatabase = "bot.db"\n'
        + HANDLER
        + TELEGRAM
        + 'group_policy = "allowlist"\n'
    )
    path = write_config(tmp_path, text)
    monkeypatch.setenv("ACTORSCOPE_DATABASE", "postgresql://bot@127.0.0.1:5432/bots")
    monkeypatch.setenv("ACTORSCOPE_WORKSPACE", "elsewhere")
    monkeypatch.setenv("ACTORSCOPE_STRICT", "true")
    monkeypatch.setenv("ACTORSCOPE_TELEGRAM__TOKEN_ENV", "OTHER_TELEGRAM_TOKEN")
    monkeypatch.setenv("ACTORSCOPE_DISCORD", '{"token_env": "D", "shard_count": 2}')
    config = BotConfig.load(path)
    assert config.database == "postgresql://bot@127.0.0.1:5432/bots"
    assert config.workspace == tmp_path.resolve() / "elsewhere"  # relative to the file
    assert config.strict is True
    telegram, discord = config.section("telegram"), config.section("discord")
    assert telegram is not None
    assert (telegram.token_env, telegram.group_policy) == ("OTHER_TELEGRAM_TOKEN", "allowlist")
    assert isinstance(discord, DiscordSection)
    assert discord.shards is not None
    assert discord.shards.shard_count == 2
    monkeypatch.setenv("ACTORSCOPE_STRICT", "yes")
    # A bad value from the environment is blamed on its variable, not on the file's line.
    with pytest.raises(ConfigError) as bad:
        BotConfig.load(path)
    assert str(bad.value) == (
        "environment ACTORSCOPE_STRICT: strict: must be true or false, got 'yes'"
    )


def test_the_environment_cannot_turn_strict_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """strict = true in the file is one-way: ACTORSCOPE_STRICT=false is refused, no downgrade."""
    path = write_config(tmp_path, "strict = true\n" + HANDLER + TELEGRAM)
    monkeypatch.setenv("ACTORSCOPE_STRICT", "false")
    with pytest.raises(ConfigError) as refused:
        BotConfig.load(path)
    assert str(refused.value) == (
        f"environment ACTORSCOPE_STRICT: cannot turn off strict = true set in {path}"
    )


def test_an_override_of_a_permission_key_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Owners, policies and allow lists from the environment are named (never their values)."""
    path = write_config(tmp_path, 'database = "bot.db"\n' + HANDLER + TELEGRAM)
    monkeypatch.setenv("ACTORSCOPE_OWNERS", '["5"]')
    monkeypatch.setenv("ACTORSCOPE_TELEGRAM__GROUP_POLICY", "open")
    monkeypatch.setenv("ACTORSCOPE_DATABASE", "other.db")
    with caplog.at_level(logging.WARNING, logger="actorscope.bots"):
        config = BotConfig.load(path)
    assert config.owners == ("5",)
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: the environment overrides security settings: "
        "ACTORSCOPE_OWNERS, ACTORSCOPE_TELEGRAM__GROUP_POLICY"
    ]


def test_a_list_variable_that_is_not_json_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ACTORSCOPE_OWNERS=abc: one line naming the variable and the JSON form, no class names."""
    path = write_config(tmp_path, HANDLER + TELEGRAM)
    monkeypatch.setenv("ACTORSCOPE_OWNERS", "abc")
    with pytest.raises(ConfigError) as bad:
        BotConfig.load(path)
    assert str(bad.value) == (
        "environment ACTORSCOPE_OWNERS: not JSON (a list or a table is written as JSON, "
        'e.g. ["4242"] or {"port": 8082})'
    )


def test_schema_config_prints_the_models_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    """`actorscope schema config` is BotConfig's JSON Schema: every section, no base_dir."""
    assert main(["schema", "config"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema == BotConfig.for_platforms().model_json_schema()
    assert {"strict", "telegram", "discord", "http", "probe"} <= set(schema["properties"])
    assert "base_dir" not in schema["properties"]
    assert schema["additionalProperties"] is False
    assert "webhook_url" in schema["$defs"]["TelegramSection"]["properties"]
    # TOML writes sender ids as integers (owners = [4242]): the schema must accept them.
    assert schema["properties"]["owners"]["items"] == {"type": ["integer", "string"]}


def test_every_non_text_key_reads_from_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Numbers, flags, durations, lists and tables of every section come through variables."""
    text = (
        HANDLER
        + TELEGRAM
        + 'mode = "webhook"\nwebhook_url = "https://bots.example.com/tg"\n'
        + 'secret_token_env = "S"\nport = 8081\n'
        + '[discord]\ntoken_env = "D"\n[http]\nport = 8080\n[audit]\n[probe]\n'
    )
    path = write_config(tmp_path, text)
    variables = {
        "OWNERS": '["4242", 5151]',
        "SHARED_DEDUP": "TRUE",
        "STRICT": " True",
        "TELEGRAM__ENABLED": "true",
        "TELEGRAM__PORT": "9443",
        "TELEGRAM__SET_WEBHOOK": "false",
        "TELEGRAM__REQUIRE_MENTION": "false",
        "TELEGRAM__IGNORE_BOTS": "False",
        "TELEGRAM__ALLOW_FROM": "[7]",
        "TELEGRAM__OWNERS": "8",
        "TELEGRAM__GROUPS": '{"-100": {"policy": "allowlist"}}',
        "TELEGRAM__GROUPS__-100__REQUIRE_MENTION": "false",
        "TELEGRAM__GROUPS__-100__ALLOW_FROM": '["9"]',
        "DISCORD__ENABLED": "false",
        "DISCORD__SHARD_COUNT": "4",
        "DISCORD__SHARD_IDS": "[1, 3]",
        "HTTP__PORT": "9090 ",
        "HTTP__MAX_CONNECTIONS": "25",
        "HTTP__HEADER_TIMEOUT": "2.5",
        "HTTP__BODY_TIMEOUT": "60",
        "HTTP__TRUSTED_PROXIES": '["10.0.0.0/24", "::1"]',
        "AUDIT__KEEP": "30d",
        "PROBE__COMMANDS": '["/note probe"]',
        "PROBE__WRITER_ONLY": '["/note"]',
    }
    for name, value in variables.items():
        monkeypatch.setenv("ACTORSCOPE_" + name, value)
    config = BotConfig.load(path)
    assert (config.owners, config.shared_dedup, config.strict) == (("4242", "5151"), True, True)
    telegram, discord = config.section("telegram"), config.section("discord")
    assert isinstance(telegram, TelegramSection)
    assert telegram.webhook is not None
    assert (telegram.enabled, telegram.webhook.port, telegram.webhook.set_webhook) == (
        True,
        9443,
        False,
    )
    assert (telegram.require_mention, telegram.ignore_bots) == (False, False)
    assert (telegram.allow_from, telegram.owners) == (("7",), ("8",))
    group = telegram.groups["-100"]
    assert (group.policy, group.require_mention, group.allow_from) == ("allowlist", False, ("9",))
    assert isinstance(discord, DiscordSection)
    assert discord.shards is not None
    assert (discord.enabled, discord.shards.shard_count, discord.shards.shard_ids) == (
        False,
        4,
        (1, 3),
    )
    assert config.http is not None
    assert (config.http.port, config.http.max_connections) == (9090, 25)
    assert (config.http.header_timeout, config.http.body_timeout) == (2.5, 60.0)
    assert config.http.trusted_proxies == ("10.0.0.0/24", "::1/128")
    assert config.audit is not None
    assert config.audit.keep == 30 * 86400
    assert config.probe is not None
    assert (config.probe.commands, config.probe.writer_only) == (("/note probe",), ("/note",))


def test_serve_takes_its_port_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """ACTORSCOPE_HTTP__PORT=9090 actorscope serve examples/console.toml: port 9090."""
    monkeypatch.setenv("ACTORSCOPE_HTTP__PORT", "9090")
    config = BotConfig.load(EXAMPLES / "console.toml", require_bots=False)
    assert config.http is not None
    assert config.http.port == 9090


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        pytest.param(
            "HTTP__PORT",
            "abc",
            "http.port: must be an integer from 0 to 65535, got 'abc'",
            id="port-not-a-number",
        ),
        pytest.param(
            "HTTP__PORT",
            "80.5",
            "http.port: must be an integer from 0 to 65535, got 80.5",
            id="port-not-an-integer",
        ),
        pytest.param(
            "HTTP__PORT", "", "http.port: must be an integer from 0 to 65535, got ''", id="empty"
        ),
        pytest.param(
            "HTTP__HEADER_TIMEOUT",
            "0",
            "http.header_timeout: must be a number of seconds above 0, at most 3600, got 0",
            id="timeout-zero",
        ),
        pytest.param(
            "DISCORD__SHARD_COUNT",
            "two",
            "discord.shard_count: must be an integer from 1 to 65536, got 'two'",
            id="shard-count",
        ),
        pytest.param(
            "HTTP__TRUSTED_PROXIES",
            "10.0.0.1",
            'not JSON (a list or a table is written as JSON, e.g. ["4242"] or {"port": 8082})',
            id="list-not-json",
        ),
        pytest.param(
            "TELEGRAM__GROUPS__-100__ALLOW_FROM",
            "[7",
            'not JSON (a list or a table is written as JSON, e.g. ["4242"] or {"port": 8082})',
            id="nested-list-not-json",
        ),
        pytest.param(
            "HTTP__COLOUR__SHADE", "red", "http.colour: unknown key", id="below-an-unknown-key"
        ),
        pytest.param("STRICT__X", "true", "strict: not a table", id="below-a-value"),
    ],
)
def test_a_bad_variable_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    """A variable that is not what its key takes: one line naming the variable and the key."""
    path = write_config(tmp_path, HANDLER + TELEGRAM + '[discord]\ntoken_env = "D"\n[http]\n')
    monkeypatch.setenv("ACTORSCOPE_" + name, value)
    with pytest.raises(ConfigError) as bad:
        BotConfig.load(path)
    assert str(bad.value) == f"environment ACTORSCOPE_{name}: {expected}"


def test_an_unknown_key_from_a_variable_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ACTORSCOPE_HTTP__COLOUR=red is the file's unknown-key line, blamed on the variable."""
    path = write_config(tmp_path, HANDLER + TELEGRAM + "[http]\n")
    monkeypatch.setenv("ACTORSCOPE_HTTP__COLOUR", "red")
    with pytest.raises(ConfigError) as bad:
        BotConfig.load(path)
    assert str(bad.value) == "environment ACTORSCOPE_HTTP__COLOUR: http.colour: unknown key"


@pytest.mark.parametrize("mode", ["off", "dm", "grants"])
def test_identity_links_reach_the_agent_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """[identity] links = "dm" | "grants" is the agent's link mode (default off), also from
    ACTORSCOPE_IDENTITY__LINKS."""
    plain = BotConfig.load(write_config(tmp_path, HANDLER + TELEGRAM))
    assert plain.agent_settings().links == "off"
    path = write_config(tmp_path, HANDLER + TELEGRAM + f'[identity]\nlinks = "{mode}"\n')
    assert BotConfig.load(path).agent_settings().links == mode
    monkeypatch.setenv("ACTORSCOPE_IDENTITY__LINKS", "grants")
    assert BotConfig.load(path).agent_settings().links == "grants"


def test_each_chat_platform_has_its_contracts_section(tmp_path: Path) -> None:
    """The platform keys are the registry's: each its contract's section model, in order."""
    path = write_config(tmp_path, HANDLER + TELEGRAM + '[discord]\ntoken_env = "D"\n')
    config = BotConfig.load(path)
    assert [section.platform for section in config.sections()] == ["telegram", "discord"]
    assert isinstance(config.section("telegram"), platform("telegram").section)
    assert isinstance(config.section("discord"), platform("discord").section)
    assert config.section("http") is None  # a section, but not a chat platform's
    assert config.section("nochat") is None
    model = BotConfig.for_platforms()
    assert set(model.model_fields) == set(BotConfig.model_fields) | {"telegram", "discord"}
    assert type(config) is model
    off = write_config(tmp_path, HANDLER + TELEGRAM + "enabled = false\n")
    with pytest.raises(ConfigError) as refused:
        BotConfig.load(off)
    assert str(refused.value) == f"{off}: no enabled [telegram] or [discord] section"


def test_a_registered_platforms_section_is_a_key_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A platform registered before the model is built gets its key; a contract whose section
    is not a ChannelSection of its own platform is one error naming the contract."""
    with register(SPEC):
        assert _platform_sections()["fakechat"] is FakeChatSection
        monkeypatch.setattr(PLATFORM, "section", ChannelSection)
        with pytest.raises(ConfigError) as refused:
            _platform_sections()
    assert str(refused.value) == (
        "tests.fakechat:PLATFORM: its section must be a ChannelSection whose platform is 'fakechat'"
    )


def test_a_section_is_read_typed_by_its_model(tmp_path: Path) -> None:
    """``config.section(TelegramSection)`` is the ``[telegram]`` section as a TelegramSection
    (mypy checks the attribute reads below), ``None`` for a platform the file has no section
    of."""
    path = write_config(tmp_path, HANDLER + TELEGRAM + 'base_url = "http://127.0.0.1:8081/bot"\n')
    config = BotConfig.load(path)
    telegram = config.section(TelegramSection)
    assert telegram is not None
    assert (telegram.mode, telegram.webhook_url) == ("polling", None)
    assert str(telegram.base_url) == "http://127.0.0.1:8081/bot"
    assert config.section(DiscordSection) is None
    assert config.section("telegram") is telegram


def test_a_platform_registered_after_the_import_gets_its_section(tmp_path: Path) -> None:
    """The sections are the registry's when a file is loaded, not when actorscope.bots was
    imported: a platform registered later has its key, and loses it when it leaves."""
    path = write_config(tmp_path, HANDLER + '[fakechat]\ntoken_env = "FAKECHAT_TOKEN"\n')
    with register(SPEC):
        config = BotConfig.load(path)
        fake = config.section(FakeChatSection)
        assert fake is not None
        assert fake.token_env == "FAKECHAT_TOKEN"  # noqa: S105 - a variable's name
        assert [section.platform for section in config.sections()] == ["fakechat"]
        assert "fakechat" in BotConfig.for_platforms().model_json_schema()["properties"]
    with pytest.raises(ConfigError, match="fakechat: unknown key"):
        BotConfig.load(path)


@pytest.mark.parametrize("name", ["section", "sections", "json", "copy", "owners", "strict"])
def test_a_platform_named_like_a_config_attribute_is_refused(tmp_path: Path, name: str) -> None:
    """A platform whose name is a top-level key or an attribute of the model (``section``,
    ``json``, ...) cannot have a section: one ConfigError naming it, before any shadowing."""
    path = write_config(tmp_path, HANDLER + TELEGRAM)
    spec = PlatformSpec(name, IdForm.OPAQUE, contract="tests.fakechat:PLATFORM")
    with register(spec), pytest.raises(ConfigError) as refused:
        BotConfig.load(path)
    assert str(refused.value) == (
        f"platform {name!r} cannot have a bot.toml section: {name!r} is a top-level key or "
        "an attribute of BotConfig (rename the platform)"
    )
