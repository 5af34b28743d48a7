"""The import graph of ``src/``: the layers, the faces as the seams, and no circles.

Between packages, only imports that run when a module is imported count: the module's top
level, including ``try``/``except`` and ordinary ``if`` blocks. Imports inside functions and
under ``if TYPE_CHECKING:`` are lazy and left out. The layer order is written down once, here,
and in docs/design.md ("Layout").

Two rules count every import, lazy and type-only ones too, because a lazy import is still a
dependency: no module imports another package's ``_`` module or ``_`` name (the faces are the
seams; only the root helpers in :data:`SHARED_HELPERS` are shared), and no modules of one
package import each other around a circle.

A platform's registration and contract name what sits above ``channels`` as
``module:attribute`` strings (its contract, simulator, probe world and sandbox), imported by
name when asked: imports too, which no ``import`` statement shows. They are resolved from the
registry and held to the same seams: each names a module no ``_`` path of another package
reaches, and an attribute its ``__all__`` exports.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from pathlib import Path

from tests.fakechat import SPEC

from actorscope.channels import platform
from actorscope.platforms import platform_specs, register

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "actorscope"

# Lowest first; a unit may import its own layer and the ones below, never one above.
# A unit is a top-level module or subpackage of actorscope; "actorscope" is the root face.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset(
        {"_aio", "_input", "_text", "_version", "errors", "platforms", "identity", "context"}
        | {"messages"}
    ),
    frozenset({"store"}),
    frozenset({ROOT}),
    frozenset({"agents"}),
    frozenset({"permissions", "propagation"}),
    frozenset({"host", "tools"}),
    frozenset({"channels", "sandbox"}),
    frozenset({"assembly"}),
    frozenset({"bots"}),
    frozenset({"http", "integrations"}),
    frozenset({"testing", "_pytest_plugin"}),
    frozenset({"cli", "__main__"}),
)

#: The private root modules every package may import: input bounds, text checks, asyncio and
#: the version.
SHARED_HELPERS = frozenset({"_aio", "_input", "_text", "_version"})

Graph = Mapping[str, Mapping[str, str]]
"""unit -> {imported unit: the first ``file:line`` that imports it}."""


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _eager_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run on import: the top level, ``try`` and non-TYPE_CHECKING ``if``."""
    for node in body:
        if isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _eager_statements(node.body)
            yield from _eager_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _eager_statements(block)
            for handler in node.handlers:
                yield from _eager_statements(handler.body)
        else:
            yield node


def module_name(path: Path, src: Path) -> str:
    """The dotted name of the module at ``path`` under ``src``."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def eager_imports(source: str, module: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """Each module imported when ``module`` is imported, with the line; relative ones resolved."""
    package = module if is_package else module.rpartition(".")[0]
    for node in _eager_statements(ast.parse(source).body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield target, node.lineno


def unit_of(module: str, root: str) -> str | None:
    """The layer unit of a module under ``root`` (its first segment below it), else None."""
    parts = module.split(".")
    if parts[0] != root:
        return None
    return parts[1] if len(parts) > 1 else root


def package_graph(src: Path, root: str) -> dict[str, dict[str, str]]:
    """The eager imports between the units of package ``root`` under ``src``."""
    graph: dict[str, dict[str, str]] = {}
    for path in sorted((src / root).rglob("*.py")):
        module = module_name(path, src)
        source_unit = unit_of(module, root)
        assert source_unit is not None
        edges = graph.setdefault(source_unit, {})
        imports = eager_imports(path.read_text(), module, path.name == "__init__.py")
        for target, line in imports:
            target_unit = unit_of(target, root)
            if target_unit is not None and target_unit != source_unit:
                edges.setdefault(target_unit, f"{path.relative_to(src)}:{line}")
    return graph


def all_imports(source: str, module: str, is_package: bool) -> Iterator[tuple[str, str, int]]:
    """Every import of ``module``, lazy and type-only too: (module, imported name or "", line)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                yield target, alias.name, node.lineno


def _modules(src: Path, root: str) -> dict[str, Path]:
    return {module_name(path, src): path for path in sorted((src / root).rglob("*.py"))}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_reaches(src: Path, root: str, shared: Set[str] = SHARED_HELPERS) -> list[str]:
    """Every import of another unit's ``_`` module or ``_`` name, as ``file:line: what``."""
    found = []
    for module, path in _modules(src, root).items():
        unit = unit_of(module, root)
        for target, name, line in all_imports(path.read_text(), module, path.name == "__init__.py"):
            target_unit = unit_of(target, root)
            if target_unit is None or target_unit == unit or target_unit in shared:
                continue
            below_root = target.split(".")[1:]
            if target_unit == root and name in shared:
                continue
            if any(map(_is_private, below_root)) or _is_private(name):
                what = f"{target}.{name}" if name else target
                found.append(f"{path.relative_to(src)}:{line}: {unit} imports {what}")
    return found


#: The members of a platform's contract that name an object above ``channels``.
CONTRACT_NAMES = ("simulator", "probe_world", "sandbox")


def contract_reaches(
    named: Iterable[tuple[str, str, str]], root: str, shared: Set[str] = SHARED_HELPERS
) -> list[str]:
    """Each ``(module holding it, what it is, "module:attribute")`` whose module is another
    unit's ``_`` module: an import by name that goes around the faces."""
    found = []
    for holder, what, where in named:
        module = where.partition(":")[0]
        unit = unit_of(module, root)
        if unit is None or unit == unit_of(holder, root) or unit in shared:
            continue
        if any(map(_is_private, module.split(".")[1:])):
            found.append(f"{holder}: {what} names {where}")
    return found


def registered_contract_names() -> list[tuple[str, str, str]]:
    """What the registry names, for every registered platform: its contract (named by its
    registration) and its contract's :data:`CONTRACT_NAMES` that are set."""
    named = []
    for spec in platform_specs():
        named.append((type(spec).__module__, f"{spec.name}'s contract", spec.contract))
        contract = platform(spec.name)
        for member in CONTRACT_NAMES:
            where = getattr(contract, member)
            if where:
                named.append((type(contract).__module__, f"{spec.name}'s {member}", where))
    return named


def module_graphs(src: Path, root: str) -> dict[str, dict[str, dict[str, str]]]:
    """unit -> its modules' imports of one another, every import counted."""
    modules = _modules(src, root)
    graphs: dict[str, dict[str, dict[str, str]]] = {}
    for module, path in modules.items():
        unit = unit_of(module, root)
        assert unit is not None
        edges = graphs.setdefault(unit, {}).setdefault(module, {})
        for target, name, line in all_imports(path.read_text(), module, path.name == "__init__.py"):
            imported = f"{target}.{name}" if f"{target}.{name}" in modules else target
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != module and unit_of(imported, root) == unit != root:
                edges.setdefault(imported, f"{path.relative_to(src)}:{line}")
    return graphs


def circles_inside(src: Path, root: str) -> list[list[str]]:
    """One circle of modules for each unit that has one."""
    return [cycle for graph in module_graphs(src, root).values() if (cycle := find_cycle(graph))]


def find_cycle(graph: Graph) -> list[str]:
    """One import cycle as ``[a, b, ..., a]``, or ``[]`` when the graph has none."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path = [start]
        branches = [iter(sorted(graph.get(start, {})))]
        while branches:
            step = next(branches[-1], None)
            if step is None:
                done.add(path.pop())
                branches.pop()
            elif step in path:
                return [*path[path.index(step) :], step]
            elif step not in done:
                path.append(step)
                branches.append(iter(sorted(graph.get(step, {}))))
    return []


def layering_violations(graph: Graph, layers: Sequence[Set[str]]) -> list[str]:
    """Every unit in no layer, and every import of a unit in a higher layer than the importer."""
    level = {unit: index for index, layer in enumerate(layers) for unit in layer}
    units = set(graph) | {target for edges in graph.values() for target in edges}
    found = [f"{unit} is in no layer" for unit in sorted(units - set(level))]
    for source in sorted(graph):
        for target, where in sorted(graph[source].items()):
            if source in level and target in level and level[target] > level[source]:
                found.append(f"{where}: {source} imports {target}, a higher layer")
    return found


def test_src_has_no_cycle_between_packages() -> None:
    """No two units of src/actorscope import each other, directly or around a loop."""
    assert find_cycle(package_graph(SRC, ROOT)) == []


def test_src_imports_only_down_the_layer_order() -> None:
    """Every unit is in a layer, and no eager import reaches a higher layer."""
    assert layering_violations(package_graph(SRC, ROOT), LAYERS) == []


def test_no_module_reaches_into_another_package() -> None:
    """Across packages, imports go through the faces: no other package's ``_`` module or name."""
    assert private_reaches(SRC, ROOT) == []


def test_no_circle_inside_a_package() -> None:
    """No modules of one package import each other around a circle, not even lazily."""
    assert circles_inside(SRC, ROOT) == []


def test_no_platform_contract_names_another_package_private_module() -> None:
    """Every registered platform's contract, simulator, probe world and sandbox is named at a
    public home: no ``_`` module of another package, an attribute its ``__all__`` exports."""
    with register(SPEC):  # one from outside actorscope too: its own modules are its own
        named = registered_contract_names()
    wheres = {where for _, _, where in named}
    assert {"actorscope.channels.telegram:PLATFORM", "tests.fakechat:PLATFORM"} <= wheres
    assert {"actorscope.testing:TelegramSim", "tests.fakechat._sim:FakeChatSim"} <= wheres
    assert contract_reaches(named, ROOT) == []
    for _, what, where in named:
        module, _, attribute = where.partition(":")
        imported = importlib.import_module(module)
        assert hasattr(imported, attribute), f"{what}: {where} does not resolve"
        if unit_of(module, ROOT) is not None:
            assert attribute in getattr(imported, "__all__", ()), f"{what}: {where} not exported"


def test_checker_finds_a_contract_naming_another_package_private_module() -> None:
    """On synthetic names: another package's ``_`` module is found; a face, a module of the
    contract's own package and a module outside the root are not."""
    named = [
        ("toy.channels.chat._platform", "chat's probe_world", "toy.testing._probe_chat:PROBE"),
        ("toy.channels.chat._platform", "chat's sandbox", "toy.sandbox._chat.sandbox:SANDBOX"),
        ("toy.channels.chat._platform", "chat's simulator", "toy.testing:ChatSim"),
        ("toy.channels.chat._platform", "chat's runner", "toy.channels._runner:RUNNER"),
        ("toy.platforms", "chat's contract", "toy.channels.chat:PLATFORM"),
        ("chat_pkg._platform", "its simulator", "chat_pkg._sim:Sim"),
        ("chat_pkg._platform", "its probe world", "toy.testing._probe:CHAT_PROBE"),
        ("toy.channels.chat._platform", "a shared helper", "toy._input:bounded"),
    ]
    assert contract_reaches(named, "toy", frozenset({"_input"})) == [
        "toy.channels.chat._platform: chat's probe_world names toy.testing._probe_chat:PROBE",
        "toy.channels.chat._platform: chat's sandbox names toy.sandbox._chat.sandbox:SANDBOX",
        "chat_pkg._platform: its probe world names toy.testing._probe:CHAT_PROBE",
    ]


def test_the_layers_name_each_unit_once() -> None:
    """No unit is written into two layers."""
    names = [unit for layer in LAYERS for unit in layer]
    assert len(names) == len(set(names))


def _write(root: Path, relative: str, source: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


def test_checker_finds_a_cycle_and_an_upward_import_and_skips_lazy_ones(tmp_path: Path) -> None:
    """On a tiny synthetic package the checker reports the cycle and the upward edge only."""
    _write(tmp_path, "toy/__init__.py", "")
    _write(tmp_path, "toy/low/__init__.py", "from toy.high import thing\n")
    _write(tmp_path, "toy/high/__init__.py", "from ..low import base\n")
    _write(
        tmp_path,
        "toy/mid.py",
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from toy import top\n"
        "def later() -> None:\n    import toy.top\n"
        "try:\n    import toy.low.impl\nexcept ImportError:\n    pass\n",
    )
    _write(tmp_path, "toy/top.py", "import toy.mid\n")
    graph = package_graph(tmp_path, "toy")
    assert graph["mid"] == {"low": "toy/mid.py:7"}
    assert graph["top"] == {"mid": "toy/top.py:1"}
    assert find_cycle(graph) == ["high", "low", "high"]
    layers = (frozenset({"low", "toy"}), frozenset({"high", "mid"}), frozenset({"top"}))
    assert layering_violations(graph, layers) == [
        "toy/low/__init__.py:1: low imports high, a higher layer"
    ]
    assert layering_violations(graph, layers[:2]) == [
        "top is in no layer",
        "toy/low/__init__.py:1: low imports high, a higher layer",
    ]


def test_checker_finds_private_reaches_and_circles_inside_a_package(tmp_path: Path) -> None:
    """On a tiny package: a reach into another package's private module or name is found, a
    shared helper, a face and the package's own private modules are not; a lazy circle is."""
    _write(tmp_path, "toy/__init__.py", "")
    _write(tmp_path, "toy/_input.py", "")
    _write(tmp_path, "toy/low/__init__.py", "from toy.low._impl import thing\n")
    _write(tmp_path, "toy/low/_impl.py", "def later() -> None:\n    from toy.low import _other\n")
    _write(tmp_path, "toy/low/_other.py", "from toy.low._impl import later\n")
    _write(
        tmp_path,
        "toy/high.py",
        "from toy import _input\nfrom toy.low import thing\nfrom toy.low import _secret\n"
        "def later() -> None:\n    from toy.low._impl import thing\n",
    )
    assert private_reaches(tmp_path, "toy", frozenset({"_input"})) == [
        "toy/high.py:3: high imports toy.low._secret",
        "toy/high.py:5: high imports toy.low._impl.thing",
    ]
    assert circles_inside(tmp_path, "toy") == [["toy.low._impl", "toy.low._other", "toy.low._impl"]]


def test_find_cycle_is_empty_on_a_chain() -> None:
    """A graph that only goes one way has no cycle."""
    assert find_cycle({"a": {"b": "x"}, "b": {"c": "y"}, "c": {}}) == []
