"""The platform contract's acceptance test: a platform added from outside, by its faces only.

``tests/fakechat`` is a tiny chat of string ids that actorscope has never heard of. Registered
through the public registry for each test, it goes the whole way every platform goes: its
normaliser through ``actorscope normalize``, its events through the channel pipeline the
composition root builds, the permission policy, its runner and its simulator in the testing
kit. docs/design.md ("Adding a platform") walks through what it adds.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests._wait import wait_until
from tests.fakechat import NAME, PLATFORM, SPEC, FakeChat, FakeChatPlatform, FakeChatSection
from tests.fakechat._sim import FakeChatSim

import actorscope
from actorscope.assembly import AgentSettings, assemble
from actorscope.bots import BotServices
from actorscope.channels import ChannelConfig, IgnoreReason, Outcome, Platform, platform
from actorscope.cli import main
from actorscope.errors import ConfigError
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.messages import InboundMessage, RunRequest
from actorscope.platforms import Account, IdForm, PlatformSpec, platform_specs, register
from actorscope.store import Database
from actorscope.testing import AgentEnv, Grants, SimulatedEvent, Turn, probe

ROOM = "group:fakechat:ideas"


@pytest.fixture(autouse=True)
def fakechat() -> Iterator[None]:
    """The fake chat is a registered platform for each test, and only then."""
    with register(SPEC):
        yield


def test_the_registry_finds_the_contract() -> None:
    """Registered, the fake chat is a platform with a contract; the registry loads it."""
    assert platform(NAME) is PLATFORM
    assert isinstance(PLATFORM, Platform)
    assert NAME in [spec.name for spec in platform_specs()]


def test_it_checks_its_own_tokens() -> None:
    """Its contract says which tokens are its own, without repeating a bad one."""
    chat = FakeChat()
    assert PLATFORM.token_problem(chat.token) == ""
    assert PLATFORM.token_problem("123:abc") == "is not a fakechat token"
    assert platform("discord").token_problem("anything") == ""


def test_unregistered_it_is_no_platform() -> None:
    """Outside its registration the fake chat is unknown, in one clear error."""
    with pytest.raises(ConfigError, match="no chat platform 'elsewhere'"):
        platform("elsewhere")


def test_it_imports_no_private_module_of_actorscope() -> None:
    """The test platform is built from actorscope's faces only."""
    private = []
    for path in (Path(__file__).parent / "fakechat").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            if module.startswith("actorscope") and any(p[0] == "_" for p in module.split(".")):
                private.append(f"{path.name}: {module}")
    assert private == []


def test_the_normaliser_identifies_sender_and_scope() -> None:
    """A person in a room shares its scope; a DM is theirs; thread splits the session only."""
    chat = FakeChat()
    said = PLATFORM.inspect(chat.message("alice", "hi", "ideas", thread="t1"))
    assert said.message is not None
    assert (said.message.user_id, said.message.sender_id) == (ROOM, "alice")
    assert said.session_key == "agent:main:fakechat:group:ideas:thread:t1"
    direct = PLATFORM.inspect(chat.message("alice", "hi"), agent_key="helper")
    assert direct.message is not None
    assert (direct.message.user_id, direct.message.peer_kind) == ("alice", PeerKind.DIRECT)
    assert direct.session_key == "agent:helper:fakechat:direct:dm.alice"


@pytest.mark.parametrize(
    ("event", "kind"),
    [
        ({"bot": True}, SenderKind.BOT),
        ({"author": None}, SenderKind.NONE),
        ({"author": "session_send_tool"}, SenderKind.SYNTHETIC),
    ],
    ids=["bot", "no author", "synthetic id"],
)
def test_a_nonperson_keeps_the_room_and_no_sender(
    event: dict[str, object], kind: SenderKind
) -> None:
    """A bot, a post without an author and a synthetic id get no sender, the room's scope."""
    raw = FakeChat().message(
        event.get("author", "helper") if "author" in event else "helper",  # type: ignore[arg-type]
        "hi",
        "ideas",
        bot=event.get("bot") is True,
    )
    message = PLATFORM.inspect(raw).message
    assert message is not None
    assert (message.user_id, message.sender_id, message.sender_kind) == (ROOM, "", kind)


def test_a_nonperson_never_borrows_a_direct_scope() -> None:
    """A bot writing in what claims to be a DM keeps a group scope of that chat, no sender."""
    raw = FakeChat().message("helper", "hi", bot=True)
    message = PLATFORM.inspect(raw).message
    assert message is not None
    assert (message.user_id, message.sender_id) == ("group:fakechat:dm.helper", "")


@pytest.mark.parametrize(
    "raw",
    [
        {"event_id": 1, "kind": "typing", "chat": {"id": "ideas", "type": "group"}},
        {"event_id": 1, "kind": "message", "chat": "ideas", "text": "hi", "message_id": "m1"},
        {
            "event_id": 1,
            "kind": "message",
            "chat": {"id": "id:eas", "type": "group"},
            "text": "hi",
            "message_id": "m1",
        },
        {
            "event_id": 1,
            "kind": "message",
            "chat": {"id": "ideas", "type": "group"},
            "text": 7,
            "message_id": "m1",
        },
        {
            "event_id": 1,
            "kind": "message",
            "chat": {"id": "ideas", "type": "group"},
            "text": "hi",
            "message_id": "m1",
            "from": {"id": "al ice", "bot": False},
        },
    ],
    ids=["not a message", "no chat object", "colon in a room", "text not a string", "bad id"],
)
def test_a_bad_event_is_ignored_not_raised(raw: dict[str, object]) -> None:
    """Whatever the event, the normaliser answers with a reason, never an exception."""
    ingress = PLATFORM.inspect(raw)
    assert ingress.message is None
    assert ingress.reason in (IgnoreReason.MALFORMED, IgnoreReason.UNSUPPORTED_EVENT)


def test_chat_identity_checks_the_platforms_ids() -> None:
    """The shared sender identification refuses an unregistered platform and bad ids."""
    assert Identity.chat(NAME, "ideas", "alice", group=True).user_id == ROOM
    with pytest.raises(Exception, match="no registered platform"):
        Identity.chat("nowhere", "ideas", "alice", group=True)
    with pytest.raises(Exception, match="fakechat id"):
        Identity.chat(NAME, "id:eas", "alice", group=True)
    integer = Identity.chat("telegram", -100, -100, group=False)
    assert (integer.user_id, integer.sender_id, integer.sender_kind) == (
        "group:telegram:-100",
        "",
        SenderKind.NONE,
    )


def test_actorscope_normalize_asks_the_contract(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``actorscope normalize --platform fakechat`` prints the fake chat's identity."""
    path = tmp_path / "event.json"
    path.write_text(json.dumps(FakeChat().message("alice", "hi", "ideas")))
    assert main(["normalize", "--platform", NAME, str(path)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["user_id"], result["sender_id"], result["channel"]) == (ROOM, "alice", NAME)
    assert main(["normalize", "--platform", "telegram", str(path)]) == 2
    assert "--platform fakechat" in capsys.readouterr().err


async def test_the_pipeline_of_the_composition_root_takes_its_events(db: Database) -> None:
    """Assembled, its channel pipeline admits a person, drops a redelivery, runs /writers."""
    assembly = await assemble(db, AgentSettings(owners=("olga",)))
    published: list[InboundMessage] = []

    async def publish(message: InboundMessage) -> None:
        published.append(message)

    config = ChannelConfig.from_mapping({"platform": NAME, "require_mention": False})
    pipeline = assembly.pipeline(config, publish=publish)
    chat = FakeChat()
    raw = chat.message("alice", "hi", "ideas")
    first = await pipeline.process(PLATFORM.inspect(raw))
    again = await pipeline.process(PLATFORM.inspect(raw))
    assert (first.outcome, again.outcome) == (Outcome.ADMITTED, Outcome.DUPLICATE)
    assert [m.sender_id for m in published] == ["alice"]
    listed = await pipeline.process(
        PLATFORM.inspect(chat.message("alice", "/writers", "ideas")),
        command_prefixes=PLATFORM.command_prefixes,
    )
    assert listed.outcome is Outcome.WRITER_COMMAND
    assert listed.answer is not None
    assert "no writers yet" in listed.answer.content


async def test_its_runner_polls_and_manages_writers(db: Database) -> None:
    """Through its runner an owner adds the author of a replied-to message as a writer."""
    assembly = await assemble(db, AgentSettings(owners=("olga",)))
    chat = FakeChat()
    config = ChannelConfig.from_mapping({"platform": NAME, "require_mention": False})
    runner = PLATFORM.runner(assembly.pipeline(config), token=chat.token, chat=chat)
    with pytest.raises(ConfigError, match="token"):
        PLATFORM.runner(assembly.pipeline(config), token=chat.token[::-1], chat=chat)
    await runner.start()
    try:
        said = chat.message("bob", "hello", "ideas")
        for event in (said, chat.message("olga", "/addwriter", "ideas", reply_to="m1")):
            chat.updates.put_nowait(event)
        await wait_until(lambda: len(chat.posted) == 1)  # the answer to /addwriter
    finally:
        await runner.stop()
        await runner.stop()
    assert chat.posted[0].chat == "ideas"
    assert chat.posted[0].text == "added bob as a writer"
    identity = replace(
        Identity.chat(NAME, "ideas", "bob", group=True),
        agent_id=assembly.agent.id,
        tenant_id=assembly.agent.tenant_id,
    )
    decision = await assembly.policy.check("file_writer", identity)
    assert (decision.allowed, decision.reason) == (True, "granted")


async def test_the_kit_judges_its_senders(tmp_path: Path) -> None:
    """In its simulator a grant allows its person; a bot, a post without an author, a
    synthetic sender and a person without a grant are denied, each with its reason."""
    config = ChannelConfig.from_mapping(
        {"platform": NAME, "require_mention": False, "ignore_bots": False}
    )
    async with AgentEnv.open(tmp_path / "kit.db") as env, FakeChatSim(env, config=config) as sim:
        sim.person("alice"), sim.person("bob"), sim.room("ideas")
        await Grants(env.store, env.agent).allow(ROOM, "alice")

        @sim.handler
        async def bot(turn: Turn) -> None:
            decision = await turn.check("file_writer")
            await turn.reply("saved" if decision.allowed else f"no: {decision.reason}")

        sim.should_allow("file_writer", reason="granted", sender="alice")
        sim.should_send(text="saved", chat="ideas")
        await sim.say("alice", "save this", "ideas")
        steps: list[tuple[str, Callable[[], Awaitable[SimulatedEvent]]]] = [
            ("no_grant", lambda: sim.say("bob", "save this", "ideas")),
            ("empty_sender", lambda: sim.bot_post("helper", "save this", "ideas")),
            ("empty_sender", lambda: sim.notice("save this", "ideas")),
            ("synthetic_sender", lambda: sim.synthetic(_synthetic("subagent:x"), "synthetic")),
        ]
        for reason, send in steps:
            sim.should_deny("file_writer", reason=reason)
            sim.should_send(text=f"no: {reason}", chat="ideas")
            await send()
        assert [e.admitted for e in sim.events] == [True] * 5


def _synthetic(sender_id: str) -> InboundMessage:
    """A message in the room from ``sender_id``, as a wrapper synthesises one."""
    return InboundMessage(
        channel=NAME,
        chat_id="ideas",
        user_id=ROOM,
        sender_id=sender_id,
        peer_kind=PeerKind.GROUP,
        sender_kind=SenderKind.SYNTHETIC,
        content="save this",
    )


async def test_the_kit_drops_nonpersons_by_default(tmp_path: Path) -> None:
    """With the default configuration a bot's post never reaches the handler."""
    async with AgentEnv.open(tmp_path / "kit.db") as env, FakeChatSim(env) as sim:
        event = await sim.bot_post("helper", "hi", "ideas")
        assert (event.admitted, event.ignored) == (False, IgnoreReason.NONPERSON_SENDER)


def test_its_people_are_accounts() -> None:
    """A fake chat person is the account ``fakechat:<id>``; a bot in its room is none."""
    chat = FakeChat()
    alice = PLATFORM.inspect(chat.message("alice", "hi", "ideas")).message
    helper = PLATFORM.inspect(chat.message("helper", "hi", "ideas", bot=True)).message
    assert alice is not None
    assert helper is not None
    assert alice.identity().account == Account(NAME, "alice")
    assert helper.identity().account is None


async def _save(request: RunRequest) -> str:
    services = BotServices.current()
    line = f"- {request.content} (by {request.sender_id or request.user_id})\n"
    services.workspace.append(services.agent, request.identity(), "notes.md", line)
    return "saved"


async def guarded(request: RunRequest) -> str:
    """A bot that saves a note only for those the policy allows."""
    decision = await BotServices.current().policy.check_file_writer()
    return await _save(request) if decision.allowed else f"refused: {decision.reason}"


async def leaky(request: RunRequest) -> str:
    """A bot that saves a note for anyone."""
    return await _save(request)


async def test_the_probe_passes_a_bot_that_asks_the_policy() -> None:
    """On the fake chat the probe proves its reach, sends every chat event and finds no leak."""
    report = await probe(guarded, platform=NAME, commands=["/save"])
    assert report.passed, report.summary()
    assert report.writer_only == ["/save"]
    assert "non-writer member" in report.events
    assert any("not events the probe knows there" in note for note in report.notes)


async def test_the_probe_finds_a_leak_on_it() -> None:
    """A writer-only command that saves for a non-writer member is a leak on the fake chat."""
    report = await probe(leaky, platform=NAME, commands=["/save"], writer_only=["/save"])
    leaks = {(case.event, case.command) for case in report.leaks}
    assert ("non-writer member", "/save") in leaks
    assert not report.passed


async def test_the_probe_needs_a_chat_simulator() -> None:
    """A platform whose simulator cannot add people and rooms is refused in one clear error."""
    with pytest.raises(ConfigError, match="the probe cannot drive it"):
        await probe(guarded, platform="discord")
    with pytest.raises(ConfigError, match="takes a handler"):
        await probe(application="x:y", platform=NAME)


async def test_the_probe_takes_every_platform_a_file_runs_on() -> None:
    """Given the channels of a file's enabled sections, the probe runs the handler on Telegram
    and on the fake chat in one run (the fake chat's events labelled with its name) and finds
    the leak on both."""
    channels = [
        ChannelConfig(platform="telegram", require_mention=False),
        ChannelConfig(platform=NAME, require_mention=False),
    ]
    report = await probe(leaky, channels=channels, commands=["/save"], writer_only=["/save"])
    leaks = {(case.event, case.command) for case in report.leaks}
    assert ("non-writer member (group)", "/save") in leaks
    assert (f"{NAME}: non-writer member", "/save") in leaks
    assert any(note.startswith(f"{NAME}: sent the events every chat has") for note in report.notes)
    with pytest.raises(ConfigError, match="takes channels for a handler"):
        await probe(leaky, channels=channels, platform=NAME)


def test_the_probe_engine_names_no_platform() -> None:
    """testing/_probe.py and _probe_run.py never name Telegram or Discord: each platform's
    probe world is what its contract names."""
    testing = Path(actorscope.__file__).parent / "testing"
    for path in (testing / "_probe.py", testing / "_probe_run.py"):
        text = path.read_text().lower()
        assert ("telegram" not in text, "discord" not in text) == (True, True), path


ALONE = """
import asyncio, sys
from tests.fakechat import SPEC
from tests.test_platform_contract import guarded
from actorscope.platforms import register
from actorscope.testing import probe

with register(SPEC):
    report = asyncio.run(probe(guarded, platform="fakechat", commands=["/save"]))
print(report.passed, sorted(m for m in sys.modules if m.startswith("actorscope.testing._probe_")))
"""


def test_a_handler_probed_on_one_platform_loads_no_other_probe_world() -> None:
    """Probing a handler on the fake chat alone imports neither Telegram's nor Discord's
    probe world (each is loaded when a run reaches its platform)."""
    done = subprocess.run(  # noqa: S603 - this interpreter, the test's own code
        [sys.executable, "-c", ALONE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).parent.parent,
    )
    assert done.returncode == 0, done.stderr
    passed, _, loaded = done.stdout.strip().partition(" ")
    assert passed == "True"
    assert "_probe_telegram" not in loaded
    assert "_probe_dpy" not in loaded
    assert "actorscope.testing._probe_effects" in loaded  # the engine's own modules did load


def test_each_built_in_platform_names_its_probe_world() -> None:
    """Telegram's and Discord's contracts name their own probe worlds; the fake chat names
    none, and gets the world every chat has."""
    assert platform("telegram").probe_world == "actorscope.testing.telegram:PROBE"
    assert platform("discord").probe_world == "actorscope.testing.discord:PROBE"
    assert PLATFORM.probe_world == ""


class _NoSimulator(FakeChatPlatform):
    """The fake chat's contract under another name, with no simulator for the kit."""

    simulator = ""

    @property
    def spec(self) -> PlatformSpec:
        """Its registration."""
        return NO_SIMULATOR_SPEC


NO_SIMULATOR_SPEC = PlatformSpec("mutechat", IdForm.OPAQUE, "thread", f"{__name__}:NO_SIMULATOR")
NO_SIMULATOR = _NoSimulator()


async def test_the_probe_names_a_platform_it_cannot_drive() -> None:
    """A platform whose contract names no simulator is not probed, and a note says so; asked
    for it alone, the probe refuses in one clear error."""
    with register(NO_SIMULATOR_SPEC):
        channels = [ChannelConfig(platform="mutechat", require_mention=False)]
        report = await probe(guarded, channels=channels, commands=["/save"])
        with pytest.raises(ConfigError, match="names no simulator: the probe cannot drive it"):
            await probe(guarded, platform="mutechat")
    assert (
        "not probed: mutechat (the platform's contract names no simulator the probe could drive)"
        in report.notes
    )
    assert "non-writer member (group)" in report.events  # Telegram's world ran, as always
    assert not [event for event in report.events if event.startswith("mutechat")]


LEAKY_BOT = """
from actorscope.bots import BotServices


async def handle(request):
    services = BotServices.current()
    line = f"- {request.content} (by {request.sender_id or request.user_id})\\n"
    services.workspace.append(services.agent, request.identity(), "notes.md", line)
    return "saved"
"""


def test_actorscope_probe_runs_a_handler_on_the_platform_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``actorscope probe bot.toml --platform fakechat`` probes the file's handler on the fake
    chat alone and finds its leak; an unknown platform, or one given for an application, is one
    line (exit 2)."""
    (tmp_path / "fakebot.py").write_text(LEAKY_BOT)
    config = tmp_path / "bot.toml"
    config.write_text('handler = "fakebot:handle"\n[telegram]\ntoken_env = "T"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "fakebot", raising=False)
    args = ["probe", str(config), "--command", "/save", "--writer-only", "/save", "--json"]
    assert main([*args, "--platform", NAME]) == 1
    report = json.loads(capsys.readouterr().out)
    leaks = {(c["event"], c["command"]) for c in report["cases"] if c["status"] == "leak"}
    assert ("non-writer member", "/save") in leaks
    assert any(
        note.startswith(f"{NAME}: sent the events every chat has") for note in report["notes"]
    )
    assert main([*args, "--platform", "nochat"]) == 2
    assert "no chat platform 'nochat'" in capsys.readouterr().err
    assert main(["probe", "fakebot:handle", "--platform", NAME]) == 2
    assert "--platform is for a bot.toml handler" in capsys.readouterr().err


class _Unfinished:
    """A contract written before its sandbox and probe world members: it lacks both."""

    command_prefixes = "/"
    event_name = "an unfinished chat event"
    simulator = ""
    section = FakeChatSection

    @property
    def spec(self) -> PlatformSpec:
        """Its registration."""
        return UNFINISHED_SPEC


UNFINISHED_SPEC = PlatformSpec("oldchat", IdForm.OPAQUE, "thread", f"{__name__}:UNFINISHED")
UNFINISHED = _Unfinished()


def test_a_contract_missing_members_is_refused_naming_them() -> None:
    """A contract that lacks members of the Platform protocol is one ConfigError naming them."""
    with register(UNFINISHED_SPEC), pytest.raises(ConfigError) as refused:
        platform("oldchat")
    assert str(refused.value) == (
        f"{__name__}:UNFINISHED is not the Platform of 'oldchat' (it has no inspect, "
        "probe_world, recognizes, runner, sandbox, token_problem)"
    )
