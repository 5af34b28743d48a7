"""The public API is the faces: each public package's ``__init__.py`` and the contract modules.

Modelled on httpx's ``tests/test_exported_members.py``: for each face, ``__all__`` is sorted,
unique and complete for what docs/design.md ("Public names") and the API reference name; every
name in it resolves; every exported class or function is actorscope's own (no third-party name
leaks through a face); and no ``_``-prefixed module is re-exported. Modules behind the faces are
not enumerated: they are private.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import actorscope

DOCS = Path(__file__).resolve().parents[1] / "docs"

# The public packages: every package directly under actorscope whose name has no leading "_".
FACES = sorted(
    [
        "actorscope",
        *(
            f"actorscope.{info.name}"
            for info in pkgutil.iter_modules(actorscope.__path__)
            if info.ispkg and not info.name.startswith("_")
        ),
    ]
)
# The modules docs/design.md ("Public names") names as modules, plus the MCP server, which needs
# the extra ``mcp`` and is therefore imported by name like the integrations, the testing
# kit's pytest plugin (its ``pytest11`` entry point names it) and scenario-file package, and
# the built-in platforms' sandboxes and probe worlds (their contracts name them, imported by
# name when a run reaches the platform).
CONTRACT_MODULES = (
    "actorscope.assembly",
    "actorscope.channels.discord",
    "actorscope.channels.telegram",
    "actorscope.context",
    "actorscope.errors",
    "actorscope.identity",
    "actorscope.integrations.aiogram",
    "actorscope.integrations.discord_ext",
    "actorscope.integrations.ptb",
    "actorscope.integrations.pydantic_ai",
    "actorscope.messages",
    "actorscope.platforms",
    "actorscope.sandbox.discord",
    "actorscope.sandbox.telegram",
    "actorscope.testing.discord",
    "actorscope.testing.plugin",
    "actorscope.testing.scenario",
    "actorscope.testing.telegram",
    "actorscope.tools.mcp_server",
)
# docs/design.md, "Public names": where each documented name is imported from.
DOCUMENTED: dict[str, tuple[str, ...]] = {
    "actorscope": ("__version__",),
    "actorscope.identity": (
        "Identity",
        "PeerKind",
        "SenderKind",
        "Scope",
        "ScopeKind",
        "session_key",
    ),
    "actorscope.context": (
        "bind_identity",
        "current_identity",
        "user_id_from_context",
        "sender_id_from_context",
    ),
    "actorscope.messages": (
        "InboundMessage",
        "OutboundMessage",
        "RunRequest",
        "RichReply",
        "Button",
        "Attachment",
        "MetaKey",
    ),
    "actorscope.platforms": (
        "PlatformSpec",
        "IdForm",
        "BuiltInPlatform",
        "Account",
        "register",
        "platform_spec",
        "platform_specs",
        "registry_cache",
    ),
    "actorscope.channels": ("Pipeline", "ChannelSection", "Platform", "platform"),
    "actorscope.channels.telegram": ("PLATFORM", "TelegramSection"),
    "actorscope.channels.discord": ("PLATFORM", "DiscordSection"),
    "actorscope.propagation": (
        "Origin",
        "OriginSigner",
        "spawn_subagent",
        "delegate",
        "teammate_dispatch",
        "session_send",
    ),
    "actorscope.permissions": (
        "GrantStore",
        "PermissionPolicy",
        "Decision",
        "Reason",
        "WriterManager",
        "AuditLog",
    ),
    "actorscope.agents": ("AgentRegistry",),
    "actorscope.tools": (
        "Tool",
        "ToolRegistry",
        "builtin_tools",
        "IdentityToken",
    ),
    "actorscope.host": ("RunStep", "Host", "MessageBus"),
    "actorscope.assembly": ("assemble", "AgentSettings", "Assembly"),
    "actorscope.bots": (
        "BotConfig",
        "HttpSection",
        "BotServices",
        "run_in_terminal",
        "run_bots",
    ),
    "actorscope.http": ("create_app",),
    "actorscope.integrations": ("Adoption",),
    "actorscope.integrations.ptb": ("install", "requires", "bound", "identity_of", "gate"),
    "actorscope.integrations.aiogram": ("install", "requires", "gate", "run_sandbox"),
    "actorscope.integrations.discord_ext": ("ActorscopeCog", "requires", "bound", "services"),
    "actorscope.integrations.pydantic_ai": ("ActorscopeDeps", "requires", "run_delegate"),
    "actorscope.sandbox": (
        "DiscordEmulator",
        "discord_pointed_at",
        "platform_sandbox",
        "Sandbox",
        "SandboxSession",
        "Console",
        "BotApiEmulator",
        "BotApiServer",
    ),
    "actorscope.sandbox.telegram": ("SANDBOX",),
    "actorscope.sandbox.discord": ("SANDBOX",),
    "actorscope.store": ("Database",),
    "actorscope.testing": (
        "TelegramSim",
        "DiscordSim",
        "Grants",
        "Turn",
        "SimulatedEvent",
        "probe",
        "Prober",
        "ProbeReport",
        "ProbeStatus",
        "ProbeReachError",
        "Simulator",
        "AgentEnv",
        "ChatSim",
    ),
    "actorscope.testing.telegram": ("PROBE",),
    "actorscope.testing.discord": ("PROBE",),
    "actorscope.testing.scenario": (
        "LoadedScenario",
        "run_scenario",
        "StepOutcome",
        "ScenarioFailure",
    ),
    "actorscope.testing.plugin": (
        "actorscope_db",
        "actorscope_grants",
        "actorscope_bind",
        "actorscope_probe",
        "telegram_sim",
        "discord_sim",
    ),
}
PUBLIC = [*FACES, *CONTRACT_MODULES]
# The distinct public names across every face and contract module, at most. The target is about
# 180 (docs/design.md, "Public names"); this is where the faces stand, and it only goes down.
# A name counts once however many faces export it; only the names of PARALLEL_NAMES have more
# than one home (test_each_name_has_one_home), so the __all__ entries are NAME_BUDGET plus
# their extra homes.
# Persons and links (issue 34) added 8: identity's PERSON_SCOPE_PREFIX, person_scope and
# person_session_key, permissions' Link, LinkMode, LinkOutcome, LinkReason and LinkStore.
# context's Binding added 1: bind_identity and propagation's bind_run had a copy each of it.
# platforms' registry_cache added 1: the caches of registry-dependent answers in permissions,
# propagation and channels are cleared by the registry, which they reach through its face.
# agents' uuid parsing went to the shared _input helper, its key checks onto AgentRegistry: -8.
# messages' reply_to became OutboundMessage.reply_to; its Buttons and Metadata are internal.
# store's default tenant slug and time text went onto Database: -3.
# testing.scenario's 22 schema models, parse_scenario and run_scenario_in left: -24.
# channels' eight META_* keys and messages' META_ORIGIN_VIA became one enum, messages.MetaKey.
# The integrations' faces removed 6 (constants onto their classes, internal result types).
# channels: writer_command_named became WriterCommand.named; sender_ids, Publish internal.
# testing's write_repros and open_env went onto ProbeReport and AgentEnv; ObservationKind,
# ExpectationError and Expectations are internal: -5.
# identity's account, problem and scope builders went onto Identity and Scope: -7.
# errors' NotADatabaseError and MigrationError became the store's own subclasses: -2.
# The sandbox member added 4 to actorscope.sandbox (platform_sandbox, Sandbox, SandboxSession,
# Console); BotProcess, DiscordConsole and sandbox_world went internal: +1.
# propagation's ticker functions, delegate announce and sanitize_inbound became methods: -4.
# cli's app is internal: main runs it: -1.
# channels.telegram: what the PTB/aiogram integrations use moved onto PLATFORM: -9.
# errors' ScenarioError became the scenario loader's own PayloadError: -1.
# tools' Violation and UnsafePathError and mcp_server's IdentitySource went internal: -3.
# platforms' platform_id is internal: a spec's chat_id canonicalises its ids: -1.
# channels.discord: what the discord.py Cog and the probe use moved onto PLATFORM: -11.
# sandbox: SandboxConsole became TelegramConsole, declared_world DiscordWorld.declared;
# DiscordChannelType, DiscordPermission and DiscordRateLimit went internal: -4.
# bots' bind_services and with_services became BotServices.bind() and .wrap(handler): -2.
# propagation's META_ORIGIN_SENDER_ID became messages.MetaKey.ORIGIN_SENDER_ID: -1.
# platforms' TELEGRAM, DISCORD and HTTP became one StrEnum, BuiltInPlatform: -2.
# host's role_for became RunStep.role_for: -1.
# channels' SharedDedup went internal: the assembly's TurnLedger (Assembly.turns) holds it.
# sandbox: TelegramChatType and TelegramMemberStatus went internal (give their strings): -2.
# permissions' parse_grant, parse_check_type, writer_scope and BYPASS_ROLES went onto classes: -4.
# pydantic_ai's actorscope_deps became ActorscopeDeps.of: -1.
# integrations' adoption_in_force became Adoption.in_force: -1.
# http's bind became HttpSection.listen(): -1.
# propagation's bind_run and current_run became RunInfo.bind() and RunInfo.current(): -2.
# platforms' registered became register used as a context manager: -1.
# channels' GroupOverride and Policy are internal (a configuration writes strings): -2.
# testing.scenario's load_scenario became LoadedScenario.load: -1.
# permissions' GrantChangeWatcher became GrantStore.watch(), non_person_reason a
# PermissionPolicy staticmethod: -2.
# channels' normalize_update, normalize_message and normalize_interaction went onto
# their PLATFORM (beside its inspect_update, inspect_message and inspect_interaction): -3.
# assembly's permission_policy became AgentSettings.policy(grants): -1.
# ptb's context_types became ActorscopeContext.types(), its run_request went (context.run_request);
# discord_ext's AppRefused is an internal Refused; pydantic_ai's builtin_toolset went: -4.
# integrations' adopting(adoption) became adoption.bind(): -1.
# identity's builders went onto Identity (chat, http, system), Telegram's and Discord's into
# their PLATFORM.identity: -5.
# sandbox: the emulators' world types became BotApiEmulator.User/.Chat/.ForumTopic and
# DiscordWorld.User/.Guild/.Channel/.Interaction: -7 on the faces. They are still seven public
# types, each with one qualified home (its world's class attribute), not counted here: the
# surface a user reads is 179 face names plus these seven.
# messages' ReplyFormat and AttachmentKind became the strings they stood for: -2.
# propagation's announce_subagent_result became task.announce(result, signer=...): -1.
# messages' Media is internal (what InboundMessage.media holds; handlers only read it): -1.
# tools' IDENTITY_HEADER and encode_identity_token became IdentityToken; mcp_server's
# fixed_identity, header_identity and stdio_identity became create_mcp_server's identity: -4.
# platforms' scope_platform is internal to identity (Scope.parse(scope).channel says it): -1.
# sandbox's read_lines is an internal asyncio helper (stdin for the prompts): -1.
# channels' Addressed is internal (MetaKey.ADDRESSED's values are strings): -1.
# identity's sender rules went onto SenderKind, its scope rules onto Scope; AGENT_KEY_PATTERN
# and person_session_key are internal (agents and propagation use them): -8.
# tools' flat_schema, resolve_agent_identity and lint_tool_schema (the CLI's) are internal;
# to_openai_strict became Tool.openai_strict_schema(): -4.
# platforms' canonical_chat_id became PlatformSpec.canonical_chat_id: -1.
# permissions' WriterReason and LinkReason became members of the one Reason enum: -2.
# sandbox's EmulatorRequest(emu) became BotApiEmulator.request(): -1.
# propagation's DelegateTask is internal (delegate()'s result, only read): -1.
# errors' IdentityValidationError, UnboundIdentityError, TenantNotFoundError, AgentNotFoundError,
# SchemaTooNewError and DatabaseNotWritableError went internal or into their base: -6.
# context's actor_id_from_context and role_from_context are current_identity()'s fields: -2.
# sandbox's TelegramConsole became BotApiServer.console(out): -1.
# bots' current_services() became BotServices.current(): -1.
# integrations' Opened is internal (Gate.opened / ActorscopeCog.opened, only read): -1.
# channels' platforms() became platforms.platform_specs() (one list of the chat platforms): -1.
# errors' PermissionDeniedError is internal to tools; store's read_sqlite_rows is a Database
# staticmethod: -2.
# propagation's build_run_request became OriginSigner.run_request: -1.
# bots' load_bot_config(path) became BotConfig.load(path): -1.
# tools.mcp_server's serve_stdio and http_server are internal to actorscope mcp: -2.
# testing's ChatSim is exported: what a platform's simulator implements for the probe: +1.
# The built-in contracts named their sandboxes and probe worlds in other packages' _ modules;
# their public homes, sandbox.telegram / .discord and testing.telegram / .discord, add the
# parallel SANDBOX and PROBE: +2 (179 distinct names in 191 __all__ entries).
NAME_BUDGET = 179

# The names with more than one public home, each with its homes and why: parallel APIs, one
# per framework or platform, that do the same thing for it. A user imports the one of their
# framework (``from actorscope.integrations.ptb import requires``), so the same name in each
# reads the same; any other name has one home (test_each_name_has_one_home).
_PTB = "actorscope.integrations.ptb"
_AIOGRAM = "actorscope.integrations.aiogram"
_DPY = "actorscope.integrations.discord_ext"
_PYDANTIC_AI = "actorscope.integrations.pydantic_ai"
PARALLEL_NAMES: dict[str, tuple[frozenset[str], str]] = {
    "PLATFORM": (
        frozenset({"actorscope.channels.telegram", "actorscope.channels.discord"}),
        "each platform's contract, where its registration's module:attribute names it",
    ),
    "SANDBOX": (
        frozenset({"actorscope.sandbox.telegram", "actorscope.sandbox.discord"}),
        "each platform's sandbox, where its contract's sandbox names it",
    ),
    "PROBE": (
        frozenset({"actorscope.testing.telegram", "actorscope.testing.discord"}),
        "each platform's probe world, where its contract's probe_world names it",
    ),
    "Gate": (
        frozenset({_PTB, _AIOGRAM}),
        "what install() puts on a PTB Application or an aiogram Dispatcher",
    ),
    "gate": (frozenset({_PTB, _AIOGRAM}), "the Gate installed on an application / dispatcher"),
    "install": (frozenset({_PTB, _AIOGRAM}), "puts the gate on the framework's application"),
    "requires": (
        frozenset({_PTB, _AIOGRAM, _DPY, _PYDANTIC_AI}),
        "the permission check as each framework spells one: decorator, flag, check, tool guard",
    ),
    "bound": (frozenset({_PTB, _DPY}), "runs a callback / block with the identity bound"),
    "identity_of": (frozenset({_PTB, _DPY}), "the identity of an admitted update / command"),
    "run_sandbox": (
        frozenset({_PTB, _AIOGRAM}),
        "runs the framework's own bot on the Bot API emulator, at a prompt",
    ),
}


# Faces that still leak a third-party name; strict, so the fix turns the xfail into a failure
# that removes the entry.
def _natural(name: str) -> list[str | int]:
    return [int(part) if i % 2 else part for i, part in enumerate(re.split(r"([0-9]+)", name))]


def _isort_key(name: str) -> tuple[int, list[str | int]]:
    """Ruff's RUF022 order: CONSTANTS, then Classes, then everything else; natural within."""
    if len(name) > 1 and name.isupper():
        category = 0
    elif name[:1].isupper():
        category = 1
    else:
        category = 2
    return category, _natural(name)


def _all_of(module: ModuleType) -> list[str]:
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list), f"{module.__name__} declares no __all__ list"
    assert all(isinstance(name, str) for name in exported)
    return exported


def _is_private_path(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


def _is_actorscope(module_name: str) -> bool:
    return module_name == "actorscope" or module_name.startswith("actorscope.")


def test_faces_are_the_known_public_packages() -> None:
    """Discovery finds the public packages (and no private one); the documented ones are faces."""
    assert {"actorscope", "actorscope.channels", "actorscope.store", "actorscope.cli"} <= set(FACES)
    assert not any(_is_private_path(name) for name in FACES)
    assert set(DOCUMENTED) <= set(PUBLIC)


def test_isort_key_matches_ruff_ordering() -> None:
    """The sort key orders constants, then classes, then the rest, with numbers naturally."""
    names = ["item10", "item2", "Item", "ITEM_2", "A", "__version__", "_x", "a1", "a_1", "ab"]
    assert sorted(names, key=_isort_key) == [
        "ITEM_2",
        "A",
        "Item",
        "__version__",
        "_x",
        "a1",
        "a_1",
        "ab",
        "item2",
        "item10",
    ]


@pytest.mark.parametrize("name", PUBLIC)
def test_all_resolves_and_is_sorted_and_unique(name: str) -> None:
    """Every name in __all__ exists, and __all__ is unique and in ruff's isort-style order."""
    module = importlib.import_module(name)
    exported = _all_of(module)
    missing = [attr for attr in exported if not hasattr(module, attr)]
    assert missing == [], f"{name}.__all__ names missing attributes: {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    assert exported == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"


@pytest.mark.parametrize("name", PUBLIC)
def test_exported_classes_and_functions_are_actorscope_own(name: str) -> None:
    """No third-party class or function leaks through a face: each comes from actorscope."""
    module = importlib.import_module(name)
    leaked = sorted(
        f"{attr} ({obj.__module__})"
        for attr in _all_of(module)
        if (inspect.isclass(obj := getattr(module, attr)) or inspect.isroutine(obj))
        and not _is_actorscope(obj.__module__)
    )
    assert leaked == [], f"{name} exports third-party names: {leaked}"


@pytest.mark.parametrize("name", PUBLIC)
def test_no_private_module_is_reexported(name: str) -> None:
    """No module is in __all__, and no public attribute is a module on a private path."""
    module = importlib.import_module(name)
    in_all = [attr for attr in _all_of(module) if isinstance(getattr(module, attr), ModuleType)]
    assert in_all == [], f"{name}.__all__ exports modules: {in_all}"
    leaked = sorted(
        attr
        for attr, obj in vars(module).items()
        if not attr.startswith("_")
        and isinstance(obj, ModuleType)
        and _is_actorscope(obj.__name__)
        and _is_private_path(obj.__name__)
    )
    assert leaked == [], f"{name} re-exports private modules: {leaked}"


@pytest.mark.parametrize("name", FACES)
def test_face_all_lists_every_public_class_and_function_it_holds(name: str) -> None:
    """Every public actorscope class or function a face imports is in its __all__."""
    face = importlib.import_module(name)
    exported = set(_all_of(face))
    unlisted = sorted(
        attr
        for attr, obj in vars(face).items()
        if not attr.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and _is_actorscope(obj.__module__)
        and attr not in exported
    )
    assert unlisted == [], f"{name} holds public names missing from __all__: {unlisted}"


@pytest.mark.parametrize("name", CONTRACT_MODULES)
def test_contract_module_all_lists_every_class_and_function_it_defines(name: str) -> None:
    """Every public class or function a contract module defines itself is in its __all__."""
    module = importlib.import_module(name)
    exported = set(_all_of(module))
    unlisted = sorted(
        attr
        for attr, obj in vars(module).items()
        if not attr.startswith(("_", "pytest_"))  # pytest calls its hooks; no one imports them
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and obj.__module__ == name
        and attr not in exported
    )
    assert unlisted == [], f"{name} defines public names missing from __all__: {unlisted}"


@pytest.mark.parametrize(("name", "documented"), sorted(DOCUMENTED.items()))
def test_documented_names_are_exported_where_the_docs_say(
    name: str, documented: tuple[str, ...]
) -> None:
    """Each name docs/design.md lists under "Public names" is in that face's __all__."""
    exported = set(_all_of(importlib.import_module(name)))
    assert sorted(set(documented) - exported) == []


def second_homes(
    exports: dict[str, list[str]], parallel: dict[str, tuple[frozenset[str], str]]
) -> list[str]:
    """Each name ``exports`` (face -> its __all__) gives more than one home unless ``parallel``
    allows exactly those homes, and each allowed name no longer at exactly its listed homes."""
    homes: dict[str, set[str]] = {}
    for face, names in exports.items():
        for name in names:
            homes.setdefault(name, set()).add(face)
    found = [
        f"{name}: {', '.join(sorted(where))}"
        for name, where in sorted(homes.items())
        if len(where) > 1 and (name not in parallel or where != parallel[name][0])
    ]
    found += [
        f"{name} is allowed at {', '.join(sorted(allowed))}, exported at "
        f"{', '.join(sorted(homes.get(name, ()))) or 'none'}"
        for name, (allowed, _) in sorted(parallel.items())
        if homes.get(name, set()) != allowed
    ]
    return found


def test_each_name_has_one_home() -> None:
    """No name is on two faces, but the parallel APIs PARALLEL_NAMES lists, at their homes."""
    exports = {face: _all_of(importlib.import_module(face)) for face in PUBLIC}
    assert second_homes(exports, PARALLEL_NAMES) == []


def test_second_homes_finds_a_name_on_two_faces_and_a_stale_allowance() -> None:
    """On synthetic faces: a name on two faces is found unless allowed at exactly those two;
    an allowance whose homes changed is found too."""
    exports = {"a": ["Thing", "run", "requires"], "b": ["run", "requires"], "c": ["requires"]}
    allowed = {"requires": (frozenset({"a", "b", "c"}), "parallel")}
    assert second_homes(exports, allowed) == ["run: a, b"]
    stale = {**allowed, "run": (frozenset({"a", "c"}), "parallel")}
    assert second_homes(exports, stale) == ["run: a, b", "run is allowed at a, c, exported at a, b"]
    assert second_homes({"a": ["run"]}, {"run": (frozenset({"a", "b"}), "gone")}) == [
        "run is allowed at a, b, exported at a"
    ]
    assert second_homes(exports, {**allowed, "run": (frozenset({"a", "b"}), "parallel")}) == []


def test_public_names_stay_within_the_budget() -> None:
    """The faces together export at most NAME_BUDGET distinct names (one name, one count)."""
    names = {name for module in PUBLIC for name in _all_of(importlib.import_module(module))}
    assert len(names) <= NAME_BUDGET, f"{len(names)} public names, budget {NAME_BUDGET}"


def test_api_reference_renders_only_public_paths() -> None:
    """Each ``:::`` path of docs/reference/api.md is a face or contract module, none private."""
    paths = re.findall(r"^::: (\S+)$", (DOCS / "reference" / "api.md").read_text(), re.MULTILINE)
    assert paths, "docs/reference/api.md renders nothing"
    assert sorted(set(paths) - set(PUBLIC)) == []


def test_no_reference_page_renders_a_private_module() -> None:
    """No ``:::`` path of any page under docs/reference is private (``channels._config``)."""
    pages = sorted((DOCS / "reference").glob("*.md"))
    paths = [
        f"{page.name}: {path}"
        for page in pages
        for path in re.findall(r"^::: (\S+)$", page.read_text(), re.MULTILINE)
    ]
    assert paths, "docs/reference renders nothing"
    assert [path for path in paths if _is_private_path(path.split(": ")[1])] == []
