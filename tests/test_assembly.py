"""The composition root: one function wires an agent; every entry point asks it.

``assemble(db, settings)`` gives a frozen :class:`Assembly` whose pipelines and run steps are
the agent's, and it is the only place outside ``permissions/`` that builds a
``PermissionPolicy``, a run step, a host or a pipeline, and, but for the whole-database
operator surfaces named in :data:`WIRED_BY_THE_ROOT`, a grant store, a link store or a writer
manager (checked on the source here, as ``tests/test_plain_code.py`` reads it).
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from actorscope.assembly import AgentSettings, assemble
from actorscope.bots import BotConfig, BotServices
from actorscope.channels import ChannelConfig
from actorscope.identity import PeerKind, SenderKind
from actorscope.messages import InboundMessage
from actorscope.permissions import Decision, LinkMode
from actorscope.store import Database

SRC = Path(__file__).resolve().parents[1] / "src" / "actorscope"
GROUP = "group:telegram:-100"


def _message(sender: str) -> InboundMessage:
    return InboundMessage(
        channel="telegram",
        sender_id=sender,
        chat_id="-100",
        content="hi",
        peer_kind=PeerKind.GROUP,
        user_id=GROUP,
        sender_kind=SenderKind.USER,
        message_id="1",
    )


async def test_assembly_is_the_agents_and_frozen(db: Database, tmp_path: Path) -> None:
    """The agent is found or created once; pipelines and run steps act for it; frozen."""
    settings = AgentSettings(agent="helper", owners=("7",), workspace=tmp_path / "ws")
    assembly = await assemble(db, settings)
    again = await assemble(db, settings)
    assert again.agent.id == assembly.agent.id
    assert assembly.agent.key == "helper"
    assert assembly.workspace.root == tmp_path / "ws"
    pipeline = assembly.pipeline(ChannelConfig(platform="telegram", owners=["8"]), owners=("9",))
    assert (pipeline.agent_key, pipeline.writers.store) == ("helper", assembly.grants)
    assert pipeline.writers.owners == {"7", "8", "9"}
    prepared = assembly.run_step().prepare(_message("7"))
    assert prepared is not None
    assert (prepared.request.agent_id, prepared.request.role) == (assembly.agent.id, "owner")
    with pytest.raises(dataclasses.FrozenInstanceError):
        assembly.policy = assembly.policy  # type: ignore[misc]


async def test_roles_are_read_at_each_turn(db: Database) -> None:
    """A role given after the assembly was made holds from the next turn on."""
    roles: dict[str, str] = {}
    step = (await assemble(db, AgentSettings(roles=roles))).run_step()
    first = step.prepare(_message("42"))
    roles["42"] = "admin"
    second = step.prepare(_message("42"))
    assert first is not None
    assert second is not None
    assert (first.request.role, second.request.role) == ("", "admin")


async def test_an_observed_assembly_tells_every_decision(db: Database) -> None:
    """``observed`` records its policy's decisions; the assembly it came from records none."""
    seen: list[Decision] = []
    assembly = await assemble(db, AgentSettings(strict=True))
    observed = assembly.observed(seen.append)
    identity = assembly.run_step().prepare(_message("42"))
    assert identity is not None
    await assembly.policy.check_file_writer(identity.identity)
    assert seen == []
    decision = await observed.policy.check_file_writer(identity.identity)
    assert seen == [decision]
    assert (observed.policy.strict, observed.grants) == (True, assembly.grants)


async def test_shared_dedup_follows_the_store_unless_told(db: Database, backend: str) -> None:
    """Shared claims are on for PostgreSQL and off for SQLite, unless the settings say."""
    default = await assemble(db)
    assert (default.turns.shared_dedup is not None) == (backend == "postgresql")
    assert (await assemble(db, AgentSettings(shared_dedup=True))).turns.shared_dedup is not None
    assert (await assemble(db, AgentSettings(shared_dedup=False))).turns.shared_dedup is None


async def test_a_bot_file_gives_its_agent_settings(tmp_path: Path, db: Database) -> None:
    """``bot.toml``'s agent, tenant, owners, strictness, workspace and dedup reach the root."""
    path = tmp_path / "bot.toml"
    path.write_text(
        'handler = "bot:handle"\nagent = "notes"\nowners = ["42"]\nstrict = true\n'
        'workspace = "files"\nshared_dedup = false\n[http]\nagent = "api"\n',
        encoding="utf-8",
    )
    config = BotConfig.load(path, require_bots=False)
    settings = config.agent_settings()
    assert (settings.agent, settings.owners, settings.strict) == ("notes", ("42",), True)
    assert (settings.workspace, settings.shared_dedup) == (tmp_path / "files", False)
    assert config.agent_settings(agent="api").agent == "api"
    services = BotServices.of(await assemble(db, settings))
    assert (services.agent.key, services.policy.strict) == ("notes", True)


async def test_links_are_the_databases_and_count_only_where_the_agent_opts_in(
    db: Database,
) -> None:
    """Every assembly holds the database's link store (operators manage links); only an
    agent whose ``links`` is ``grants`` has a policy that counts a person's grants."""
    off = await assemble(db)
    counted = await assemble(db, AgentSettings(agent="linked", links=LinkMode.GRANTS))
    assert (off.links.db, counted.links.db) == (db, db)
    assert (off.policy.links, counted.policy.links) == (None, counted.links)
    assert off.observed(lambda decision: None).policy.links is None


def _constructed(path: Path) -> set[str]:
    """The names of the classes ``path`` calls by name (``X(...)`` or ``module.X(...)``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
    }


#: What only the composition root wires, and where else each may be built (beside the root and
#: the ``permissions`` package, which defines the policy and the stores). The grant and link
#: stores are a whole database's: the operator surfaces that work on every agent of one build
#: their own (``actorscope grants``, ``actorscope links``, ``actorscope mcp`` without
#: ``--agent``, and the HTTP app over a bare database, whose writer manager is over that grant
#: store). Nothing else builds a run step, a host or a pipeline: they come from an assembly.
WIRED_BY_THE_ROOT: dict[str, set[str]] = {
    "PermissionPolicy": set(),
    "GrantStore": {"cli/_grants.py", "cli/_mcp.py", "http/_ops.py"},
    "LinkStore": {"cli/_links.py", "http/_ops.py"},
    "WriterManager": {"http/_ops.py"},
    "RunStep": set(),
    "Host": set(),
    "Pipeline": set(),
}
_PERMISSIONS = {"PermissionPolicy", "GrantStore", "LinkStore", "WriterManager"}


def test_only_the_root_wires_an_agent() -> None:
    """Policies, stores, writer managers, run steps, hosts and pipelines are built by the
    composition root, and the stores also by the few whole-database surfaces listed."""
    found: dict[str, set[str]] = {name: set() for name in WIRED_BY_THE_ROOT}
    for path in SRC.rglob("*.py"):
        where = path.relative_to(SRC).as_posix()
        for name in _constructed(path) & set(WIRED_BY_THE_ROOT):
            own = name in _PERMISSIONS and where.startswith("permissions/")
            if where != "assembly.py" and not own:
                found[name].add(where)
    assert found == WIRED_BY_THE_ROOT
