"""The kit runs the user's own ``actorscope run`` handler and records its policy's decisions.

The notes bot of ``examples/telegram_bot.py`` is served by its ``module:function`` string (the
loader ``actorscope run`` uses), with ``BotServices.current()`` bound; ``should_allow`` /
``should_deny`` see the decisions its policy makes, not a stub's.
"""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import pytest

from actorscope.bots import BotServices
from actorscope.channels import Outcome
from actorscope.errors import ConfigError
from actorscope.identity import Identity
from actorscope.messages import RunRequest
from actorscope.permissions import Decision, PermissionPolicy, Reason
from actorscope.testing import AgentEnv, DiscordSim, Grants, TelegramSim
from actorscope.testing._grants import Binder
from actorscope.testing.scenario import LoadedScenario, run_scenario
from actorscope.testing.scenario._loader import ScenarioError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTES_BOT = "telegram_bot:handle"


async def test_policy_observer_sees_every_decision_warm_or_cold(
    actorscope_env: AgentEnv, actorscope_grants: Grants, actorscope_bind: Binder
) -> None:
    """A policy's observer is told each decision: direct, cold group, warm group, each check."""
    seen: list[Decision] = []
    policy = PermissionPolicy(actorscope_env.store, observer=seen.append)
    scope = "group:telegram:-100123"
    await actorscope_grants.allow(scope, "4242")
    with actorscope_bind(sender="4242"):
        await policy.check_file_writer()
    with actorscope_bind(sender="4242", scope=scope):
        await policy.check_file_writer()  # cold: the lookup
        await policy.check_file_writer()  # warm: from the cache
        await policy.check_cron()
        await policy.check_context_files()
    with actorscope_bind(sender="5151", scope=scope):
        await policy.check("file_writer")
    assert [(d.config_type, d.reason) for d in seen] == [
        ("file_writer", Reason.NOT_GROUP_CONTEXT),
        ("file_writer", Reason.GRANTED),
        ("file_writer", Reason.GRANTED),
        ("cron", Reason.GRANTED),
        ("context_files", Reason.GRANTED),
        ("file_writer", Reason.NO_GRANT),
    ]


async def test_notes_bot_served_by_its_handler_string(
    telegram_sim: TelegramSim, actorscope_grants: Grants, actorscope_env: AgentEnv
) -> None:
    """The notes bot by "telegram_bot:handle": writer saves, non-writer denied with reason,
    an admin's /addwriter makes them a writer; the decisions are its own policy's."""
    telegram_sim.serve(NOTES_BOT, search_dir=EXAMPLES)
    alice, bob, carol = (telegram_sim.user(n) for n in ("alice", "bob", "carol"))
    devs = telegram_sim.supergroup("devs")
    telegram_sim.make_admin(devs, carol)
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)

    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="saved", chat=devs)
    await telegram_sim.message(alice, "/note buy milk", devs)

    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    telegram_sim.should_send(text="denied: no_grant", chat=devs)
    asked = await telegram_sim.message(bob, "/note me too", devs)

    telegram_sim.should_send(text=f"refused (not_authorized): {_NOT_AUTHORIZED}", chat=devs)
    refused = await telegram_sim.message(
        carol, "/addwriter", devs, reply_to=asked.payload["message"]["message_id"]
    )
    assert refused.outcome is Outcome.WRITER_COMMAND  # an admin adds the first writer only

    await actorscope_grants.revoke(f"group:telegram:{devs.id}", alice)
    telegram_sim.should_send(text=f"added @bob ({bob.id}) as a writer", chat=devs)
    await telegram_sim.message(
        carol, "/addwriter", devs, reply_to=asked.payload["message"]["message_id"]
    )

    telegram_sim.should_allow("file_writer", reason="granted", sender=bob)
    telegram_sim.should_send(text="saved", chat=devs)
    await telegram_sim.message(bob, "/note me too", devs)

    assert actorscope_env.workspace is not None
    notes = actorscope_env.workspace.directory(
        actorscope_env.agent, Identity(user_id=f"group:telegram:{devs.id}", sender_id="")
    )
    assert (notes / "notes.md").read_text(encoding="utf-8") == (
        f"- buy milk (by {alice.id})\n- me too (by {bob.id})\n"
    )


_NOT_AUTHORIZED = (
    "only owners and writers may manage writers; group admins may add the first writer only"
)


async def test_owners_of_the_env_manage_writers_in_the_sim(
    actorscope_env: AgentEnv, actorscope_grants: Grants
) -> None:
    """A sender with role owner in the env is an owner of the runner's writer manager too."""
    actorscope_env.roles["7001"] = "owner"
    async with TelegramSim(actorscope_env) as sim:
        dave, bob = sim.user("dave", user_id=7001), sim.user("bob")
        devs = sim.supergroup("devs")
        # a writer exists already
        await actorscope_grants.allow(f"group:telegram:{devs.id}", "4242")
        said = await sim.message(bob, "hello", devs)
        sim.should_send(text=f"added @bob ({bob.id}) as a writer", chat=devs)
        await sim.message(dave, "/addwriter", devs, reply_to=said.payload["message"]["message_id"])
        sim.expect.verify_done()


async def test_served_handler_on_discord_records_its_decisions(discord_sim: DiscordSim) -> None:
    """The same handler string on Discord: the member's denial is recorded with its reason."""
    discord_sim.serve(NOTES_BOT, search_dir=EXAMPLES)
    erin = discord_sim.user("erin")
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    discord_sim.should_deny("file_writer", reason="no_grant", sender=erin)
    discord_sim.should_send(text="denied: no_grant", chat=general)
    await discord_sim.message(erin, "!note hi", general)


async def test_served_function_gets_the_sims_services(telegram_sim: TelegramSim) -> None:
    """A handler passed as a function also runs with BotServices.current() bound to the sim's."""
    seen: list[PermissionPolicy] = []

    @telegram_sim.serve
    async def handle(request: RunRequest) -> str:
        seen.append(BotServices.current().policy)
        return "ok"

    telegram_sim.should_send(text="ok")
    await telegram_sim.message(telegram_sim.user("alice"), "hi")
    assert seen == [telegram_sim.policy]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("nosuchmodule_xyz:handle", "handler module 'nosuchmodule_xyz' not found"),
        ("telegram_bot:nothing", "module telegram_bot has no 'nothing'"),
        ("telegram_bot:note_text", "is not an async function"),
        ("no colon", "handler must look like module:function"),
    ],
)
async def test_a_bad_handler_string_is_one_config_error(
    telegram_sim: TelegramSim, spec: str, problem: str
) -> None:
    """A handler string that names nothing usable is one ConfigError saying what is wrong."""
    with pytest.raises(ConfigError, match=problem):
        telegram_sim.serve(spec, search_dir=EXAMPLES)


_TWIN = """\
from actorscope.messages import RunRequest


async def handle(request: RunRequest) -> str:
    return "from {folder}"
"""


async def test_the_bot_module_of_another_folder_is_loaded_from_its_own_folder(
    telegram_sim: TelegramSim, tmp_path: Path
) -> None:
    """`twin_probe_bot:handle` from folder a, then from folder b: b's file is served (not a's
    module, imported already); a's is served again after."""
    folders = {name: tmp_path / name for name in ("a", "b")}
    for name, folder in folders.items():
        folder.mkdir()
        (folder / "twin_probe_bot.py").write_text(_TWIN.format(folder=name), "utf-8")
    for name in ("a", "b", "a"):
        handler = telegram_sim.serve("twin_probe_bot:handle", search_dir=folders[name])
        assert inspect.getsourcefile(handler) == str(folders[name] / "twin_probe_bot.py")
        telegram_sim.should_send(text=f"from {name}")
        await telegram_sim.message(telegram_sim.user("alice"), "hi")


async def test_a_bot_module_named_like_an_imported_module_is_refused(
    telegram_sim: TelegramSim, tmp_path: Path
) -> None:
    """A `json.py` beside the handler's config cannot replace the json every library here
    uses: one ConfigError naming both files, not "module json has no 'handle'"."""
    (tmp_path / "json.py").write_text(_TWIN.format(folder="json"), "utf-8")
    with pytest.raises(ConfigError) as refused:
        telegram_sim.serve("json:handle", search_dir=tmp_path)
    assert str(refused.value) == (
        f"handler 'json:handle': module json is imported already, from {json.__file__}, so "
        f"{tmp_path / 'json.py'} cannot be loaded under that name: rename json.py and the "
        "module in the handler's name"
    )


SCENARIO = """\
setup:
  handler: HANDLER
  telegram:
    users: {alice: 4242}
    chats:
      devs: {type: supergroup, id: -100123}
steps:
  - telegram: {from: alice, chat: devs, text: /note hi}
    expect:
      decision: {allowed: false, reason: no_grant}
      replies: [{text: "denied: no_grant"}]
"""


def scenario_in(folder: Path, text: str) -> Path:
    """``text`` as ``notes.scenario.yaml`` in ``folder``, with the notes bot beside it."""
    shutil.copy(EXAMPLES / "telegram_bot.py", folder / "telegram_bot.py")
    path = folder / "notes.scenario.yaml"
    path.write_text(text, encoding="utf-8")
    return path


async def test_scenario_runs_the_handler_of_setup(tmp_path: Path) -> None:
    """setup.handler runs the user's handler; the step's decision is the handler's own."""
    path = scenario_in(tmp_path, SCENARIO.replace("HANDLER", NOTES_BOT))
    outcomes = await run_scenario(LoadedScenario.load(path), tmp_path / "s.db")
    assert [(o.action, o.decision, o.reason) for o in outcomes] == [
        ("file_writer", "denied", "no_grant")
    ]


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        ("absent_notes_module:handle", "notes.scenario.yaml:2: setup.handler: handler module"),
        ("broken_notes:handle", "notes.scenario.yaml:2: setup.handler: handler 'broken_notes:h"),
        ("telegram_bot:missing", "notes.scenario.yaml:2: setup.handler: handler 'telegram_bot:m"),
    ],
    ids=["missing-module", "import-fails", "missing-function"],
)
async def test_a_missing_or_broken_scenario_handler_names_file_and_line(
    tmp_path: Path, handler: str, problem: str
) -> None:
    """A setup.handler that cannot be loaded is one ScenarioError at the handler's line."""
    (tmp_path / "broken_notes.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    path = scenario_in(tmp_path, SCENARIO.replace("HANDLER", handler))
    with pytest.raises(ScenarioError) as failure:
        await run_scenario(LoadedScenario.load(path), tmp_path / "s.db")
    assert str(failure.value).startswith(f"{tmp_path}/{problem}"), str(failure.value)


def test_a_scenario_with_a_handler_scripts_no_stub(tmp_path: Path) -> None:
    """With setup.handler a step's action (or reply) is an error naming its line."""
    text = SCENARIO.replace("HANDLER", NOTES_BOT).replace(
        "    expect:\n", "    action: file_writer\n    expect:\n"
    )
    with pytest.raises(ScenarioError, match=r"notes.scenario.yaml:9: steps\[0\].action: setup"):
        LoadedScenario.load(scenario_in(tmp_path, text))


REPLY_TO = """\
setup:
  telegram:
    users: {alice: 4242}
    chats: {devs: {type: supergroup, id: -100123}}
steps:
  - http: {user: u}
  - telegram: {from: alice, chat: devs, text: hello}
  - telegram: {from: alice, text: hi, reply_to: NUMBER}
"""


@pytest.mark.parametrize(
    ("number", "problem"),
    [
        (4, "must name an earlier step (1..2), got 4"),
        (1, "step 1 is no Telegram message"),
        (2, "step 2 was in another chat"),
    ],
)
async def test_reply_to_names_an_earlier_telegram_message_of_the_chat(
    tmp_path: Path, number: int, problem: str
) -> None:
    """A reply_to that names no earlier message of the same chat is one ScenarioError."""
    path = tmp_path / "reply.scenario.yaml"
    path.write_text(REPLY_TO.replace("NUMBER", str(number)), encoding="utf-8")
    with pytest.raises(ScenarioError) as failure:
        await run_scenario(LoadedScenario.load(path), tmp_path / "s.db")
    assert str(failure.value) == f"{path}:8: reply_to: {problem}"


async def test_scenario_owners_manage_writers(tmp_path: Path) -> None:
    """setup.owners are owners of the runners' writer managers, not only a run-step role."""
    text = """\
setup:
  owners: [dave]
  grants: [{chat: devs, sender: alice}]
  telegram:
    users: {alice: 4242, bob: 5151, dave: 7171}
    chats: {devs: {type: supergroup, id: -100123}}
steps:
  - telegram: {from: bob, chat: devs, text: hello}
  - telegram: {from: dave, chat: devs, text: /addwriter, reply_to: 1}
    expect: {replies: [{text: "added @bob (5151) as a writer"}]}
"""
    path = tmp_path / "owners.scenario.yaml"
    path.write_text(text, encoding="utf-8")
    outcomes = await run_scenario(LoadedScenario.load(path), tmp_path / "s.db")
    assert outcomes[1].decision == "writer command"
