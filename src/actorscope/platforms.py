"""The platforms actorscope knows: one registry every layer asks instead of naming them.

A platform is registered once, as a :class:`PlatformSpec`: its name (the default channel name,
the ``bot.toml`` section and the prefix of its accounts), the form of its ids and what a
thread splits a session by, and where its *contract* lives (the ``module:attribute`` of its
:class:`~actorscope.channels.Platform`: normaliser, runner, writer-command surface,
simulator). What the identity layer asks (is ``"042"`` a person id here? may a chat id read
``"ideas"``?) is answered from the spec alone, without loading the platform; what the
channels ask loads it (:func:`actorscope.channels.platform`).

The built-in platforms are Telegram, Discord and the HTTP API (no contract: it has no
events to normalise). A platform of another distribution is found through its entry point in
the group ``actorscope.platforms`` (``chat = "chat_pkg:SPEC"``, naming its spec), loaded once,
at the first question the built-in platforms cannot answer; one that cannot be loaded is one
:class:`~actorscope.errors.ConfigError` naming it, raised by a question about its name and by
the list of the chat platforms (:func:`platform_specs`, what a ``bot.toml`` is loaded
against), never by a question about another name (a bot's own channel name). Code registers
a spec with :func:`register` (for the length of a block when used as
``with register(spec):``, as the tests' fake chat is). No platform replaces one already
registered, so nothing installed or imported can relax a registered platform's id rules. An
answer that depends on the registry is kept with :func:`registry_cache`, which the registry
clears on every change (discovery is one thread's, under a lock: the others wait for it), so
no answer given before a platform registered or left is served after.

An *account* is one person on one platform, ``<platform>:<id>`` (:class:`Account`);
:attr:`actorscope.identity.Identity.account` says whose account an identity acts as.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, ParamSpec, Protocol, TypeVar, cast

from actorscope.errors import ConfigError, IdentityError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "Account",
    "BuiltInPlatform",
    "IdForm",
    "PlatformSpec",
    "platform_spec",
    "platform_specs",
    "register",
    "registry_cache",
]

#: The entry-point group a distribution names its platforms' specs in.
ENTRY_POINT_GROUP = "actorscope.platforms"

_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_INTEGER = re.compile(r"-?[0-9]{1,32}")
#: An opaque id: a short ASCII token, never a scope's ``:`` nor a grant's ``*`` or ``|``.
_OPAQUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+=-]{0,127}")


P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class _RegistryCached(Protocol[P, R_co]):
    """A function :func:`registry_cache` keeps answers of."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co:
        """The answer for the registry as it is now."""
        ...

    def cache_clear(self) -> None:
        """Forget every kept answer."""
        ...


class BuiltInPlatform(StrEnum):
    """The built-in platforms' names (each also the default channel name of its bots)."""

    TELEGRAM = "telegram"
    DISCORD = "discord"
    HTTP = "http"


class IdForm(StrEnum):
    """How a platform spells its ids (sender ids and chat ids)."""

    #: Canonical decimal integers: a person is a positive one without sign or leading zero
    #: (Telegram user ids, Discord snowflakes); a chat may be negative.
    INTEGER = "integer"
    #: Short ASCII tokens (letters, digits, ``_ . @ + = -``): opaque, compared byte for byte.
    OPAQUE = "opaque"


@dataclass(frozen=True, slots=True)
class PlatformSpec:
    """A registered platform: what any layer may ask without loading it.

    ``name`` is lowercase (``telegram``); ``ids`` its id form; ``thread`` what a thread id
    splits a session key by (a Telegram forum ``topic``, a Discord ``thread``); ``contract``
    the ``module:attribute`` of its :class:`~actorscope.channels.Platform` (``""``: no
    events of its own, like the HTTP API).

    Its scope grammar: ``group_form`` is ``group`` (its groups are
    ``group:<platform>:<chat>``) or ``guild`` (per-member ``guild:<gid>:user|webhook|bot:<id>``
    scopes, which name no platform); ``legacy_groups`` says a two-part ``group:<chat>`` is
    its. The grammar is closed: only a built-in platform holds the ``guild`` form or the
    legacy one, so a registration can add a platform's groups but no new group form.

    ``legacy_direct_keys`` says its direct scopes (a person's numeric id) are stored under the
    bare id, as files and memory written before a direct scope's storage key named its channel
    are (Telegram's, ``tools``' storage keys); closed like the legacy groups, since two
    platforms' bare ids would share a key.
    """

    name: str
    ids: IdForm
    thread: Literal["topic", "thread"] = "thread"
    contract: str = ""
    group_form: Literal["group", "guild"] = "group"
    legacy_groups: bool = False
    legacy_direct_keys: bool = False
    #: The largest person id of an integer platform's accounts (``0``: no bound);
    #: :meth:`Account.parse` refuses a larger one (an operator's typo, never a person).
    max_person_id: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ConfigError(
                f"a platform name is 1-32 lowercase letters, digits, '_' or '-', got {self.name!r}"
            )
        object.__setattr__(self, "ids", IdForm(self.ids))
        if self.thread not in ("topic", "thread"):
            raise ConfigError(f"a platform's thread is 'topic' or 'thread', got {self.thread!r}")
        if self.group_form not in ("group", "guild"):
            raise ConfigError(
                f"a platform's group form is 'group' or 'guild', got {self.group_form!r}"
            )

    def chat_id(self, value: int | str, what: str = "chat id") -> str:
        """``value`` as this platform's canonical chat id; :class:`IdentityError` naming
        ``what`` for anything else (a colon or a synthetic prefix never gets into a scope)."""
        if self.ids is IdForm.INTEGER:
            return _integer_id(value, what)
        if isinstance(value, str) and _OPAQUE.fullmatch(value):
            return value
        raise IdentityError(f"{what} must be a {self.name} id (letters, digits), got {value!r}")

    @classmethod
    def canonical_chat_id(cls, channel: str, value: int | str, what: str = "chat id") -> str:
        """``value`` as a chat id of ``channel``: :meth:`chat_id` of its platform's spec; a
        channel of another name (a bot's own channel name) keeps the numeric form."""
        spec = _REGISTRY.get(channel)
        if spec is None:
            return _integer_id(value, what)
        return spec.chat_id(value, what)

    def is_person_id(self, value: str) -> bool:
        """True iff ``value`` is spelled as one of this platform's person ids."""
        if self.ids is IdForm.INTEGER:
            return _INTEGER.fullmatch(value) is not None and value[0] not in "-0"
        return _OPAQUE.fullmatch(value) is not None


def _a(platform: str) -> str:
    """``platform`` with its article, as it is read: "a telegram", "an HTTP"."""
    name = "HTTP" if platform == BuiltInPlatform.HTTP else platform
    return f"{'an' if name == 'HTTP' or name[0] in 'aeiou' else 'a'} {name}"


def _integer_id(value: int | str, what: str) -> str:
    """A Telegram / Discord numeric id as a canonical decimal string.

    Raises :class:`IdentityError` naming ``what`` for anything else, so a colon, a username
    or a synthetic prefix can never be smuggled into a scope.
    """
    if type(value) is int:  # the hot path: ids straight from a parsed update
        return str(value)
    if isinstance(value, bool):
        raise IdentityError(f"{what} must be a numeric id, got a boolean")
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return str(int(value))
    raise IdentityError(f"{what} must be a numeric id, got {value!r}")


_BUILT_IN = (
    PlatformSpec(
        BuiltInPlatform.TELEGRAM.value,
        IdForm.INTEGER,
        "topic",
        "actorscope.channels.telegram:PLATFORM",
        legacy_groups=True,
        legacy_direct_keys=True,
        max_person_id=2**52 - 1,  # the Bot API: a user id has at most 52 significant bits
    ),
    PlatformSpec(
        BuiltInPlatform.DISCORD.value,
        IdForm.INTEGER,
        "thread",
        "actorscope.channels.discord:PLATFORM",
        group_form="guild",
        max_person_id=2**64 - 1,  # a snowflake is a 64-bit unsigned integer
    ),
    PlatformSpec(BuiltInPlatform.HTTP.value, IdForm.OPAQUE),
)


def _refusal(spec: object, taken: dict[str, PlatformSpec]) -> str:
    """Why ``spec`` cannot join the platforms in ``taken``; ``""`` when it can."""
    if not isinstance(spec, PlatformSpec):
        return f"register() takes a PlatformSpec, got {type(spec).__name__}"
    if spec.name in taken:
        return f"a platform named {spec.name!r} is registered already"
    if spec.group_form != "group" or spec.legacy_groups:
        return (
            f"{spec.name}: a registered platform's groups are group:{spec.name}:<chat>; the "
            "guild and legacy forms are the built-in platforms' (the grammar is closed)"
        )
    if spec.legacy_direct_keys:
        return (
            f"{spec.name}: a registered platform's direct scopes are stored under "
            f"direct:{spec.name}:<id>; the bare-id key is a built-in platform's, for its "
            "data written before (the storage keys are closed)"
        )
    return ""


def _entry_point_spec(entry: EntryPoint, taken: dict[str, PlatformSpec]) -> PlatformSpec:
    """The spec ``entry`` names, checked; one ConfigError naming the entry point if not."""
    where = f"platform entry point {entry.name} = {entry.value!r} ({ENTRY_POINT_GROUP})"
    try:
        spec = entry.load()
    except Exception as exc:  # an installed distribution's import: any failure is its problem
        raise ConfigError(f"{where} cannot be loaded: {type(exc).__name__}: {exc}") from None
    if not isinstance(spec, PlatformSpec):
        raise ConfigError(f"{where}: it names a {type(spec).__name__}, not a PlatformSpec")
    problem = _refusal(spec, taken)
    if not problem and spec.name != entry.name:
        problem = f"it names the platform {spec.name!r}, not {entry.name!r}"
    if problem:
        raise ConfigError(f"{where}: {problem}")
    return spec


class _Registry:
    """The one registry: the built-in platforms, the installed distributions' (found through
    their entry points when a question first misses the ones known), and the registered ones.
    Only :meth:`add`, :meth:`remove` and the discovery change it, never a name it holds, and
    each change moves :attr:`generation` on and clears every :func:`registry_cache`."""

    __slots__ = (
        "_broken",
        "_clears",
        "_discovered",
        "_discovering",
        "_lock",
        "_specs",
        "generation",
    )

    def __init__(self, built_in: tuple[PlatformSpec, ...]) -> None:
        self._specs = {spec.name: spec for spec in built_in}
        self._discovered = False
        self._discovering = False
        #: Installed platforms that cannot be loaded, by entry-point name: why.
        self._broken: dict[str, str] = {}
        # Reentrant: a platform's own import, in the discovering thread, may ask again.
        self._lock = threading.RLock()
        #: Moves on with every change (before the caches are cleared).
        self.generation = 0
        #: The ``cache_clear`` of each :func:`registry_cache`: called on every change.
        self._clears: list[Callable[[], None]] = []

    def on_change(self, clear: Callable[[], None]) -> None:
        """Call ``clear`` after every change (a registry cache forgetting its answers)."""
        with self._lock:
            self._clears.append(clear)

    def _changed(self) -> None:
        # Under the lock, after the specs changed: no kept answer predates this state.
        self.generation += 1
        for clear in self._clears:
            clear()

    def get(self, name: str) -> PlatformSpec | None:
        """The platform named ``name``, looking for installed ones on the first miss."""
        spec = self._specs.get(name)
        if spec is None:
            if not self._discovered:
                self._discover()
                spec = self._specs.get(name)
            if name in self._broken:  # a question about it; the others' answers stand
                raise ConfigError(self._broken[name])
        return spec

    def all(self) -> tuple[PlatformSpec, ...]:
        """Every platform, the built-in ones first."""
        if not self._discovered:
            self._discover()
        if self._broken:  # the list is not all there is
            raise ConfigError(self._broken[min(self._broken)])
        return tuple(self._specs.values())

    def add(self, spec: PlatformSpec) -> None:
        """Register ``spec`` (after the installed ones, so a name clash is said at once)."""
        if not self._discovered:
            self._discover()
        with self._lock:
            problem = self._broken.get(getattr(spec, "name", "")) or _refusal(spec, self._specs)
            if problem:
                raise ConfigError(problem)
            self._specs = {**self._specs, spec.name: spec}
            self._changed()

    def remove(self, name: str) -> None:
        """Forget a platform :meth:`add` registered."""
        with self._lock:
            self._specs = {key: spec for key, spec in self._specs.items() if key != name}
            self._changed()

    def _discover(self) -> None:
        # Imported here: reading the installed distributions' metadata costs an import most
        # processes (every question about a built-in platform) never need.
        from importlib.metadata import entry_points

        # One thread looks; the others wait for its answer. A platform's own import, in the
        # looking thread, may ask the registry: it is answered with what is known so far.
        # A broken entry point is kept as its error: a question about its name, or for the
        # list of all platforms, raises it; the others' platforms are added.
        with self._lock:
            if self._discovered or self._discovering:
                return
            self._discovering = True
            try:
                found: dict[str, PlatformSpec] = {}
                broken: dict[str, str] = {}
                for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
                    try:
                        spec = _entry_point_spec(entry, self._specs | found)
                    except ConfigError as exc:
                        broken.setdefault(entry.name, str(exc))
                        continue
                    found[spec.name] = spec
            finally:
                self._discovering = False
            self._specs = {**self._specs, **found}
            self._broken = broken
            self._discovered = True
            self._changed()


_REGISTRY = _Registry(_BUILT_IN)


def registry_cache(
    maxsize: int, *, typed: bool = False
) -> Callable[[Callable[P, R]], _RegistryCached[P, R]]:
    """``functools.lru_cache`` for an answer that depends on the registry (an id rule, a
    scope, a session key): the registry forgets every kept answer when it changes (a platform
    registers, leaves or is discovered), so none is ever served for an older state. A hit
    costs what an ``lru_cache`` hit costs."""

    def decorate(function: Callable[P, R]) -> _RegistryCached[P, R]:
        @functools.wraps(function)
        def current(*args: P.args, **kwargs: P.kwargs) -> R:
            # An answer computed while the registry changed (another thread registering) is
            # computed again, so the one kept is of a single state, the newest.
            generation = _REGISTRY.generation
            answer = function(*args, **kwargs)
            for _ in range(_RECOMPUTE):
                if _REGISTRY.generation == generation:
                    break
                generation = _REGISTRY.generation
                answer = function(*args, **kwargs)
            return answer

        cached = functools.lru_cache(maxsize=maxsize, typed=typed)(current)
        _REGISTRY.on_change(cached.cache_clear)
        return cast("_RegistryCached[P, R]", cached)

    return decorate


#: How often an answer is computed again when the registry keeps changing meanwhile.
_RECOMPUTE = 8


class _Registration(AbstractContextManager[PlatformSpec]):
    """A platform :func:`register` registered: ``with`` it, the platform leaves at the end of
    the block (a test's platform); otherwise it stays."""

    __slots__ = ("spec",)

    def __init__(self, spec: PlatformSpec) -> None:
        self.spec = spec

    def __enter__(self) -> PlatformSpec:
        return self.spec

    def __exit__(self, *exc_info: object) -> None:
        _REGISTRY.remove(self.spec.name)


def register(spec: PlatformSpec) -> AbstractContextManager[PlatformSpec]:
    """Register a platform; :class:`ConfigError` when its name is taken. It stays registered,
    unless the call is used as a context manager (``with register(spec):``, a test's
    platform): then it leaves at the end of the block."""
    _REGISTRY.add(spec)
    return _Registration(spec)


def platform_spec(name: str) -> PlatformSpec | None:
    """The platform registered as ``name`` (a channel name that is a platform's), or ``None``."""
    return _REGISTRY.get(name)


def platform_specs() -> tuple[PlatformSpec, ...]:
    """Every registered chat platform (one with events of its own: a contract), built-in
    ones first; the HTTP API, which has none, is :func:`platform_spec` ``("http")`` only."""
    return tuple(spec for spec in _REGISTRY.all() if spec.contract)


@dataclass(frozen=True, slots=True, order=True)
class Account:
    """One person on one platform: ``telegram:42``, ``discord:1234``, ``http:alice``."""

    platform: str
    id: str

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"

    @classmethod
    def parse(cls, text: str) -> Account:
        """``<platform>:<id>`` of a registered platform; :class:`IdentityError` otherwise."""
        platform, sep, account = text.partition(":") if isinstance(text, str) else ("", "", "")
        spec = _REGISTRY.get(platform)
        if not sep or spec is None:
            known = ", ".join(sorted(known.name for known in _REGISTRY.all()))
            raise IdentityError(
                f"an account is <platform>:<id> of a known platform ({known}): {text!r}"
            )
        if not spec.is_person_id(account) or (
            spec.ids is IdForm.INTEGER and 0 < spec.max_person_id < int(account)
        ):
            bound = f" (1 to {spec.max_person_id})" if spec.max_person_id else ""
            raise IdentityError(f"{account!r} is not {_a(platform)} person id{bound}")
        return cls(platform, account)
