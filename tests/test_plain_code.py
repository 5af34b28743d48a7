"""Plain code on the security path: a read of the source finds no tricks (docs/design.md).

The identity, propagation, channel and permission modules are parsed with :mod:`ast` and must
not reach into another module's or library's private names, build objects behind their
constructors (``object.__new__``, ``tuple.__new__``, ``object.__setattr__`` on anything but
``self``), touch pydantic's internals (``__dict__``, ``__pydantic_*__``) or hashlib's private
types. A module's own private names are its business.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "actorscope"
# What a reviewer of identity code reads: every module here is checked.
CHECKED = ("propagation", "channels", "permissions", "identity.py")
# pydantic keeps a model's state here; only pydantic may write or read them.
PYDANTIC_INTERNALS = frozenset(
    {"__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"}
)
CONSTRUCTOR_BYPASSES = frozenset({("object", "__new__"), ("tuple", "__new__")})


def checked_files(root: Path) -> list[Path]:
    """Every ``.py`` file of the checked packages and modules under ``root``."""
    files: list[Path] = []
    for name in CHECKED:
        path = root / name
        files.extend(sorted(path.glob("*.py")) if path.is_dir() else [path])
    return files


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_names(tree: ast.Module) -> set[str]:
    """Every name the module itself defines: functions, classes, assignments, attributes, slots."""
    owned: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            owned.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            owned.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            owned.add(node.attr)
        elif isinstance(node, ast.Assign) and "__slots__" in map(ast.unparse, node.targets):
            owned.update(
                item.value
                for item in ast.walk(node.value)
                if isinstance(item, ast.Constant) and isinstance(item.value, str)
            )
    return owned


def _is_super_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def findings(source: str) -> list[str]:
    """What a reviewer would have to stop at in ``source``, one line each; empty when plain."""
    tree = ast.parse(source)
    owned = _own_names(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom):
            found.extend(
                f"{line}: imports private {node.module}.{alias.name}"
                for alias in node.names
                if _is_private(alias.name)
            )
        elif isinstance(node, ast.Attribute):
            base = node.value
            base_name = base.id if isinstance(base, ast.Name) else ""
            text = ast.unparse(node)
            if node.attr in PYDANTIC_INTERNALS or node.attr.startswith("__pydantic_"):
                found.append(f"{line}: pydantic internals {text}")
            elif (base_name, node.attr) in CONSTRUCTOR_BYPASSES:
                found.append(f"{line}: constructor bypass {text}")
            elif base_name == "hashlib" and node.attr.startswith("_"):
                found.append(f"{line}: hashlib private {text}")
            elif _is_private(node.attr) and (
                _is_super_call(base)
                or (base_name not in ("self", "cls") and node.attr not in owned)
            ):
                found.append(f"{line}: another module's private {text}")
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "object.__setattr__":
            target = node.args[0] if node.args else None
            if not (isinstance(target, ast.Name) and target.id == "self"):
                found.append(f"{line}: object.__setattr__ on {ast.unparse(node)}")
        elif isinstance(node, ast.Constant) and node.value in PYDANTIC_INTERNALS:
            found.append(f"{line}: pydantic internals by name {node.value!r}")
    # An object.__setattr__ that is not called (hoisted into a name) is a bypass as well.
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and ast.unparse(node.value) == "object.__setattr__":
            found.append(f"{node.lineno}: object.__setattr__ hoisted into a name")
    return sorted(found)


@pytest.mark.parametrize("path", checked_files(SRC), ids=lambda path: str(path.relative_to(SRC)))
def test_security_path_is_plain_code(path: Path) -> None:
    """The module reaches no foreign privates, bypasses no constructor, touches no internals."""
    assert findings(path.read_text(encoding="utf-8")) == []


def test_every_checked_place_exists() -> None:
    """The checked packages are found, so a move cannot silently empty the check."""
    files = checked_files(SRC)
    assert all(path.is_file() for path in files)
    assert {path.parent.name for path in files} >= {"propagation", "channels", "permissions"}
    assert SRC / "identity.py" in files


@pytest.mark.parametrize(
    "source",
    [
        "signer._verify(values, True)",
        "def f(self):\n    return super()._async_setup_hook()",
        "import hashlib\ndef pads() -> hashlib._Hash: ...",
        "new = object.__new__\n",
        "origin = tuple.__new__(Origin, fields)",
        "values = msg.__dict__",
        "object.__setattr__(message, '__pydantic_fields_set__', set())",
        "_set = object.__setattr__",
        "from actorscope.channels._base import _inbound",
        "slots = BaseModel.__dict__['__pydantic_extra__']",
    ],
)
def test_each_trick_is_found(source: str) -> None:
    """The checker flags every trick the security path once used."""
    assert findings(source) != []


@pytest.mark.parametrize(
    "source",
    [
        "class A:\n    __slots__ = ('_key',)\n    def f(self, other):\n        return other._key",
        "def _helper(): ...\nx = module_level = _helper()",
        "class B:\n    def __post_init__(self):\n        object.__setattr__(self, 'kind', 1)",
        "import hmac, hashlib\nmac = hmac.new(b'k', b'm', hashlib.sha256).hexdigest()",
        "from actorscope.channels.discord._ids import person",
    ],
)
def test_plain_code_passes(source: str) -> None:
    """A module's own privates, a frozen dataclass's own setattr and stdlib hmac are plain."""
    assert findings(source) == []
