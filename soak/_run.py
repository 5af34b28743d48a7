"""One soak run: set everything up, play the stream under faults, take it down, judge.

Processes: PostgreSQL (its own throwaway cluster), N ``actorscope run`` workers and one
``actorscope serve`` (the operator's API). In this process: the Telegram Bot API emulator and
its webhook dispatcher, the Discord emulator (gateway and REST), a proxy per worker in front of
PostgreSQL, the driver (the people), the operator's client, the fault injector and samplers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._streams import mixed_stream

from actorscope.sandbox import BotApiServer, DiscordEmulator
from soak._cluster import Cluster, find_bindir
from soak._dispatcher import Dispatcher
from soak._driver import Driver
from soak._faults import OUTAGE_SECONDS, Planned, schedule
from soak._model import Fault, Reply
from soak._operator import Change, Operator, make_key
from soak._proxy import Proxy
from soak._workers import Slot, Supervisor
from soak._world import DiscordSide, TelegramSide, discord_side, telegram_side

__all__ = ["Observed", "Settings", "run"]

REPO = Path(__file__).resolve().parents[1]
AGENT = "soak"
Out = Callable[[str], None]
#: A worker must answer a probe within this many seconds to count as whole.
_PROBE_WAIT = 2.0
#: A fault not recovered from within this many seconds is a failure.
_RECOVERY_LIMIT = 90.0
#: Probing a worker after a revoke stops after this many seconds.
_REVOKE_PROBE_LIMIT = 3.0
#: How long the probes still unanswered at that limit may take: a worker with a backlog (after a
#: fault) answers late, and a late denial is a slow revoke, not an unseen one.
_LATE_PROBE_WAIT = 30.0


@dataclass(frozen=True, slots=True)
class Settings:
    """How long, how many workers, how busy; everything else follows from the seed."""

    duration: float = 120.0
    workers: int = 3
    rate: float = 30.0
    seed: int = 17
    people: int = 2000
    chats: int = 40
    discord_people: int = 200
    shards_per_worker: int = 2
    #: Seconds to wait after the stream for the last replies.
    drain: float = 30.0
    #: Keep the run's directory (logs, configuration) here instead of deleting it.
    keep: Path | None = None


@dataclass(slots=True)
class RevokeSeen:
    """When each worker first denied after one revoke (``None``: not within the limit)."""

    change: Change
    #: slot -> seconds from the API's answer to the worker's first denial.
    by_slot: dict[int, float | None] = field(default_factory=dict)


@dataclass(slots=True)
class Observed:
    """Everything the run saw, for the report."""

    settings: Settings
    started: float = 0.0
    stream_ended: float = 0.0
    driver: Driver | None = None
    dispatcher: Dispatcher | None = None
    slots: list[Slot] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    kills: dict[int, set[int]] = field(default_factory=dict)  # instance pid -> in-flight ids
    changes: list[Change] = field(default_factory=list)
    revokes: list[RevokeSeen] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    #: Audit rows still in the database at the end (the rest were pruned by retention).
    audit_left: int = 0
    keep: str = ""
    db_sizes: list[tuple[float, int]] = field(default_factory=list)
    tables: dict[str, tuple[int, int]] = field(default_factory=dict)
    schedule: list[Planned] = field(default_factory=list)
    managed: set[tuple[str, str]] = field(default_factory=set)
    probe_pair: tuple[str, str] = ("", "")
    error_lines: dict[int, list[str]] = field(default_factory=dict)
    exit_codes: dict[int, int | None] = field(default_factory=dict)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _bot_toml(
    database: str, tg_base: str, demu: DiscordEmulator, shard_count: int, keep: str
) -> str:
    return f"""\
# The soak's bot: one file for every worker; each gets its port, shards and database proxy
# from ACTORSCOPE_* variables.
database = "{database}"
agent = "{AGENT}"
handler = "soak.soak_bot:handle"

[telegram]
token_env = "TELEGRAM_BOT_TOKEN"
base_url = "{tg_base}"
require_mention = false
mode = "webhook"
webhook_url = "https://soak.invalid/tg"
secret_token_env = "TELEGRAM_WEBHOOK_SECRET"
listen = "127.0.0.1"
port = 8443
path = "/tg"

[discord]
token_env = "DISCORD_BOT_TOKEN"
require_mention = false
api_url = "{demu.api_url}"
gateway_url = "{demu.gateway_url}"
shard_count = {shard_count}

[audit]
keep = "{keep}"
"""


def _keep(settings: Settings) -> str:
    """How long the soak's bot keeps its audit trail: a quarter of the run (at least a minute),
    so retention runs while the soak reads every row before it goes."""
    return f"{max(1, round(settings.duration / 240))}m"


def _serve_toml(database: str, port: int) -> str:
    return f"""\
# The operator's API (actorscope serve): no bots, no message handler.
database = "{database}"
agent = "{AGENT}"

[http]
host = "127.0.0.1"
port = {port}
handler = ""
"""


def _env(tg: TelegramSide, dc: DiscordSide, secret: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("ACTORSCOPE_")}
    path = [str(REPO), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {
        **env,
        "PYTHONPATH": os.pathsep.join(path),
        "TELEGRAM_BOT_TOKEN": tg.emu.token,
        "DISCORD_BOT_TOKEN": dc.world.token,
        "TELEGRAM_WEBHOOK_SECRET": secret,
    }


class _Run:
    """The running soak's parts, wired together (one instance per run)."""

    def __init__(self, settings: Settings, out: Out) -> None:
        self.settings = settings
        self.out = out
        self.rng = random.Random(settings.seed)  # noqa: S311 - reproducible, not a secret
        self.seen = Observed(settings)
        self.granted: dict[tuple[str, str], bool] = {}
        #: Every audit row read so far, by id.
        self.audit_seen: dict[int, dict[str, Any]] = {}
        #: The probes that follow each revoke (awaited before the workers stop).
        self.revoke_watches: list[asyncio.Task[None]] = []

    # -- the operator ---------------------------------------------------------------------

    async def _operate(self, operator: Operator, driver: Driver, end: float) -> None:
        """Toggle a random managed grant about once a second; probe every worker on a revoke."""
        pairs = sorted(self.granted)
        while time.monotonic() < end:
            await asyncio.sleep(self.rng.uniform(0.5, 1.5))
            pair = self.rng.choice(pairs)
            action = "revoke" if self.granted[pair] else "grant"
            change = await operator.change(action, *self._grant_key(pair))
            if change.status == 0 or change.status >= 500:
                continue  # not known to have happened: the pair stays as it was
            self.granted[pair] = action == "grant"
            if action == "revoke" and change.ok:
                self.revoke_watches.append(
                    asyncio.get_running_loop().create_task(self._watch_revoke(driver, change, pair))
                )

    @staticmethod
    def _grant_key(pair: tuple[str, str]) -> tuple[str, str]:
        group, sender = pair
        return (f"{group}:*" if group.startswith("guild:") else group), sender

    async def _watch_revoke(self, driver: Driver, change: Change, pair: tuple[str, str]) -> None:
        """Probe each worker that can see ``pair`` until it denies (bounded)."""
        seen = RevokeSeen(change)
        self.seen.revokes.append(seen)
        group, sender = pair
        if group.startswith("group:telegram:"):
            chat_id = int(group.rsplit(":", 1)[1])
            slots = [
                s.index
                for s in self.seen.slots
                if s.current and s.current.ready and not s.current.killed
            ]
            await asyncio.gather(
                *(self._until_denied(driver, seen, slot, chat_id, int(sender)) for slot in slots)
            )
        else:
            await self._until_denied_discord(driver, seen, group, int(sender))

    async def _until_denied(
        self, driver: Driver, seen: RevokeSeen, slot: int, chat_id: int, user_id: int
    ) -> None:
        limit = time.time() + _REVOKE_PROBE_LIMIT
        seen.by_slot[slot] = None
        unanswered: list[str] = []
        while time.time() < limit:
            key = driver.telegram_probe(slot, chat_id=chat_id, user_id=user_id)
            reply = await driver.wait_reply(key, _PROBE_WAIT)
            if reply is None:
                unanswered.append(key)
            elif _denies(reply):
                seen.by_slot[slot] = max(0.0, reply.decided - seen.change.answered)
                return
            await asyncio.sleep(0.1)
        await _late_denial(driver, seen, slot, unanswered)

    async def _until_denied_discord(
        self, driver: Driver, seen: RevokeSeen, group: str, user_id: int
    ) -> None:
        dc = driver.dc
        index = next(i for i, g in enumerate(dc.guilds) if group == f"guild:{g.id}")
        limit = time.time() + _REVOKE_PROBE_LIMIT
        unanswered: dict[int, list[str]] = {}
        while time.time() < limit:
            key = await driver.discord_probe(index, user_id)
            slot = driver.sent[key].slot
            seen.by_slot.setdefault(slot, None)
            reply = await driver.wait_reply(key, _PROBE_WAIT)
            if reply is None:
                unanswered.setdefault(slot, []).append(key)
            elif _denies(reply):
                seen.by_slot[slot] = max(0.0, reply.decided - seen.change.answered)
                return
            await asyncio.sleep(0.1)
        for slot, keys in unanswered.items():
            await _late_denial(driver, seen, slot, keys)

    # -- faults ---------------------------------------------------------------------------

    async def _inject(
        self,
        planned: Planned,
        cluster: Cluster,
        supervisor: Supervisor,
        proxies: list[Proxy],
        dispatcher: Dispatcher,
        driver: Driver,
    ) -> None:
        fault = Fault(planned.kind, time.time())
        self.seen.faults.append(fault)
        dropped: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        if planned.kind == "kill":
            slot = self.rng.choice(supervisor.slots)
            in_flight = set(dispatcher.in_flight[slot.index])
            instance = supervisor.kill(slot)
            if instance is not None:
                self.seen.kills[instance.pid] = in_flight
            fault.target = f"worker {slot.index}"
        elif planned.kind == "pg_restart":
            await cluster.restart()
        elif planned.kind == "listen_kill":
            fault.note = f"{await cluster.terminate_listeners()} connections"
        elif planned.kind == "store_outage":
            slot = self.rng.choice(supervisor.slots)
            fault.target = f"worker {slot.index}"
            asyncio.get_running_loop().create_task(proxies[slot.index].blackhole(OUTAGE_SECONDS))
        else:

            def on_drop(update_id: int, slot: int) -> None:
                fault.target = f"update {update_id} to worker {slot}"
                if not dropped.done():
                    dropped.set_result(update_id)

            dispatcher.on_drop = on_drop
            dispatcher.drop_next()
        self.out(f"  {fault.at - self.seen.started:6.1f}s  fault {planned.kind} {fault.target}")
        await self._recover(
            fault, supervisor, driver, dropped if planned.kind == "webhook_drop" else None
        )

    async def _recover(
        self,
        fault: Fault,
        supervisor: Supervisor,
        driver: Driver,
        dropped: asyncio.Future[int] | None,
    ) -> None:
        """Wait until every worker answers a probe from its store while hearing changes."""
        limit = fault.at + _RECOVERY_LIMIT
        if dropped is not None:
            # The cut update must be delivered again, and answered if it wants an answer.
            update_id = await asyncio.wait_for(dropped, _RECOVERY_LIMIT)
            sent = next((s for s in driver.sent.values() if s.update_id == update_id), None)
            if sent is not None and sent.expect != "nothing":
                await driver.wait_reply(sent.key, limit - time.time())
            delivery = driver.dispatcher.deliveries.get(update_id)
            # The dispatcher's own tasks deliver it: poll their record (bounded).
            while delivery is not None and delivery.taken_by is None and time.time() < limit:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        while time.time() < limit:
            if await self._all_whole(supervisor, driver):
                fault.recovered = time.time()
                return
            await asyncio.sleep(0.25)

    async def _all_whole(self, supervisor: Supervisor, driver: Driver) -> bool:
        """Every worker is up, its Discord shards are connected, and each answers a probe from
        its store while hearing grant changes."""
        for slot in supervisor.slots:
            current = slot.current  # a killed one counts as gone before the supervisor sees it
            if current is None or current.ready is None or current.killed is not None:
                return False
        connected = {s.shard[0] for s in driver.demu.connected_sessions()}
        if connected != set(range(driver.dc.shard_count)):
            return False
        keys = [driver.telegram_probe(slot.index) for slot in supervisor.slots]
        replies = await asyncio.gather(*(driver.wait_reply(k, _PROBE_WAIT) for k in keys))
        return all(_whole(r) for r in replies)

    # -- samplers -------------------------------------------------------------------------

    async def _sample_db(self, cluster: Cluster) -> None:
        while True:
            with contextlib.suppress(Exception):
                self.seen.db_sizes.append((time.time(), await cluster.database_size()))
            await asyncio.sleep(10.0)

    async def _trim_emulators(self, tg: TelegramSide, demu: DiscordEmulator) -> None:
        """Keep the emulators' own logs small (the driver has seen every call already)."""
        while True:
            await asyncio.sleep(30.0)
            tg.emu.calls.clear()
            del demu.messages[:-1000]

    # -- the whole run --------------------------------------------------------------------

    async def run(self, work: Path) -> Observed:
        settings = self.settings
        seen = self.seen
        out = self.out
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError(
                "no PostgreSQL binaries under /usr/lib/postgresql (apt install postgresql)"
            )
        shard_count = settings.workers * settings.shards_per_worker
        tg = telegram_side(people=settings.people, chats=settings.chats)
        dc = discord_side(people=settings.discord_people, shard_count=shard_count)
        secret = secrets.token_urlsafe(24)
        cluster = Cluster(bindir, _free_port())
        async with AsyncExitStack() as stack:
            out(f"soak: PostgreSQL {bindir.parent.name} on 127.0.0.1:{cluster.port} ({work})")
            stack.push_async_callback(cluster.stop)
            await cluster.start()
            server = await stack.enter_async_context(BotApiServer(tg.emu))
            demu = await stack.enter_async_context(DiscordEmulator(dc.world, wait_timeout=60.0))
            proxies = [
                await stack.enter_async_context(Proxy(cluster.port))
                for _ in range(settings.workers)
            ]
            config = work / "bot.toml"
            config.write_text(
                _bot_toml(cluster.url(), server.base_url, demu, shard_count, _keep(settings)),
                encoding="utf-8",
            )
            serve_config = work / "serve.toml"
            serve_config.write_text(_serve_toml(cluster.url(), _free_port()), encoding="utf-8")
            env = _env(tg, dc, secret)
            key = await make_key(cluster.url(), env)
            operator = Operator(serve_config, env, work / "serve.err", AGENT)
            await operator.start(key)
            stack.push_async_callback(operator.stop)
            slots = [
                Slot(
                    i,
                    _free_port(),
                    tuple(
                        range(i * settings.shards_per_worker, (i + 1) * settings.shards_per_worker)
                    ),
                    cluster.url(port=proxies[i].port),
                )
                for i in range(settings.workers)
            ]
            seen.slots = slots
            seen.keep = _keep(settings)
            supervisor = Supervisor(config, slots, env, work)
            out(f"soak: starting {settings.workers} workers")
            await supervisor.start()
            stack.push_async_callback(self._stop_workers, supervisor)
            await demu.wait_connected(count=shard_count)
            urls = [f"http://127.0.0.1:{s.webhook_port}/tg" for s in slots]
            dispatcher = await stack.enter_async_context(Dispatcher(tg.emu, urls, secret))
            seen.dispatcher = dispatcher
            slot_of_shard = {shard: s.index for s in slots for shard in s.shard_ids}
            driver = Driver(tg, dc, demu, dispatcher, slot_of_shard, settings.seed)
            seen.driver = driver
            await self._setup_grants(operator, tg, dc)
            if not await self._all_whole(supervisor, driver):
                raise RuntimeError("the workers do not answer their first probes")
            seen.schedule = schedule(settings.duration, settings.seed)
            out(f"soak: {settings.duration:g}s of stream at ~{settings.rate:g} events/s; faults:")
            for planned in seen.schedule:
                out(f"  {planned.offset:6.1f}s  {planned.kind:13} {planned.description}")
            seen.started = time.time()
            end = time.monotonic() + settings.duration
            tasks = [
                asyncio.create_task(self._sample_db(cluster)),
                asyncio.create_task(self._trim_emulators(tg, demu)),
                asyncio.create_task(self._follow_audit(operator)),
            ]
            stack.push_async_callback(_cancel, tasks)
            faults = asyncio.create_task(
                self._faults(cluster, supervisor, proxies, dispatcher, driver)
            )
            operating = asyncio.create_task(self._operate(operator, driver, end))
            tasks += [faults, operating]
            await self._stream(driver, tg, dc, end)
            seen.stream_ended = time.time()
            await operating
            await faults
            out("soak: stream over; waiting for the last replies")
            await self._drain(driver, dispatcher)
            await asyncio.gather(*self.revoke_watches)  # each bounded by the probe limits
            await self._stop_workers(supervisor)
            seen.changes = list(operator.changes)
            await self._read_audit(operator)
            seen.audit = list(self.audit_seen.values())
            seen.audit_left = await self._count_audit(operator)
            seen.tables = await cluster.table_sizes()
            with contextlib.suppress(Exception):
                seen.db_sizes.append((time.time(), await cluster.database_size()))
        return seen

    async def _setup_grants(self, operator: Operator, tg: TelegramSide, dc: DiscordSide) -> None:
        """The probe user may write in the probe chat; half the managed pairs start granted."""
        probe = (f"group:telegram:{tg.probe_chat.id}", str(tg.probe_user.id))
        self.seen.probe_pair = probe
        change = await operator.change("grant", *probe)
        if not change.ok:
            raise RuntimeError(f"the operator's first grant failed: HTTP {change.status}")
        pairs = [
            (f"group:telegram:{chat.id}", str(user.id))
            for chat in tg.chats[:6]
            for user in tg.people[:8]
        ] + [(f"guild:{g.id}", str(u.id)) for g in dc.guilds[:4] for u in dc.people[:6]]
        self.seen.managed = set(pairs)
        for index, pair in enumerate(pairs):
            self.granted[pair] = index % 2 == 0
            if self.granted[pair]:
                await operator.change("grant", *self._grant_key(pair))

    async def _stream(self, driver: Driver, tg: TelegramSide, dc: DiscordSide, end: float) -> None:
        settings = self.settings
        events = mixed_stream(
            telegram_chats=len(tg.chats),
            discord_channels=len(dc.channels),
            senders=settings.people,
            seed=settings.seed,
        )
        loop = asyncio.get_running_loop()
        at = loop.time()
        while time.monotonic() < end:
            at += self.rng.expovariate(settings.rate)
            delay = at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            await driver.play(next(events))

    async def _faults(
        self,
        cluster: Cluster,
        supervisor: Supervisor,
        proxies: list[Proxy],
        dispatcher: Dispatcher,
        driver: Driver,
    ) -> None:
        running: list[asyncio.Task[None]] = []
        for planned in self.seen.schedule:
            delay = self.seen.started + planned.offset - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            running.append(
                asyncio.create_task(
                    self._inject(planned, cluster, supervisor, proxies, dispatcher, driver)
                )
            )
        await asyncio.gather(*running)

    async def _drain(self, driver: Driver, dispatcher: Dispatcher) -> None:
        limit = time.monotonic() + self.settings.drain
        while time.monotonic() < limit:
            waiting = [s for s in driver.sent.values() if s.expect != "nothing" and not s.replies]
            if not waiting and dispatcher.pending == 0:
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(1.0)  # a late duplicate would show now

    async def _stop_workers(self, supervisor: Supervisor) -> None:
        if supervisor.slots and all(s.process is None for s in supervisor.slots):
            return
        await supervisor.stop()
        for slot in supervisor.slots:
            for instance in slot.instances:
                self.seen.exit_codes[instance.pid] = instance.returncode
                lines = [
                    line
                    for line in instance.log.read_text(errors="replace").splitlines()
                    if " ERROR " in line
                ]
                if lines:
                    self.seen.error_lines[instance.pid] = lines
            slot.process = None

    async def _read_audit(self, operator: Operator) -> int:
        """The audit rows written since the last read, through the API (newest first, page by
        page down to a row already read); how many. Retention deletes old rows meanwhile, so
        the soak reads as it goes."""
        known = self.audit_seen
        newest = max(known, default=0)
        fresh: list[dict[str, Any]] = []
        cursor: int | None = None
        session = operator.session
        while True:
            params: dict[str, str] = {"limit": "100"}
            if cursor is not None:
                params["cursor"] = str(cursor)
            async with session.get(f"{operator.base}/v1/audit", params=params) as response:
                if response.status != 200:
                    raise RuntimeError(f"GET /v1/audit answered {response.status}")
                page = await response.json()
            items = page["items"]
            fresh.extend(row for row in items if int(row["id"]) not in known)
            cursor = page.get("next_cursor")
            if not cursor or any(int(row["id"]) <= newest for row in items):
                break
        for row in fresh:
            known[int(row["id"])] = row
        return len(fresh)

    async def _count_audit(self, operator: Operator) -> int:
        """How many audit rows the database still holds (through the API)."""
        count = 0
        cursor: int | None = None
        while True:
            params: dict[str, str] = {"limit": "100"}
            if cursor is not None:
                params["cursor"] = str(cursor)
            async with operator.session.get(f"{operator.base}/v1/audit", params=params) as got:
                page = await got.json()
            count += len(page["items"])
            cursor = page.get("next_cursor")
            if not cursor:
                return count

    async def _follow_audit(self, operator: Operator) -> None:
        while True:
            await asyncio.sleep(15.0)
            with contextlib.suppress(Exception):  # the store restarting: read it next time
                await self._read_audit(operator)


def _dump(seen: Observed, path: Path) -> None:
    """Every event with its replies and deliveries, one JSON object a line (for ``--keep``)."""
    if seen.driver is None:
        return
    deliveries = seen.dispatcher.deliveries if seen.dispatcher is not None else {}
    with path.open("w", encoding="utf-8") as sink:
        for sent in seen.driver.sent.values():
            delivery = deliveries.get(sent.update_id)
            record = {
                "key": sent.key,
                "platform": sent.platform,
                "doing": sent.doing,
                "sent": sent.sent - seen.started,
                "expect": sent.expect,
                "pair": sent.pair,
                "update_id": sent.update_id,
                "slot": sent.slot,
                "excuse": sent.excuse,
                "replies": [{"seen": r.seen - seen.started, **r.fields} for r in sent.replies],
                "attempts": delivery.attempts if delivery is not None else None,
            }
            sink.write(json.dumps(record) + "\n")


async def _cancel(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _late_denial(driver: Driver, seen: RevokeSeen, slot: int, keys: list[str]) -> None:
    """Wait (bounded) for probes a busy worker left unanswered; the earliest denial counts."""
    replies = await asyncio.gather(*(driver.wait_reply(k, _LATE_PROBE_WAIT) for k in keys))
    denials = [reply.decided for reply in replies if reply is not None and _denies(reply)]
    if denials:
        seen.by_slot[slot] = max(0.0, min(denials) - seen.change.answered)


def _denies(reply: Reply | None) -> bool:
    """A decision read from the grants that says no (a fail-open allow says nothing)."""
    return reply is not None and reply.reason not in ("granted", "store_error_fail_open")


def _whole(reply: Reply | None) -> bool:
    return reply is not None and reply.fields.get("S") == "ok" and reply.fields.get("L") == "1"


async def run(settings: Settings, out: Out = print) -> Observed:
    """Run the soak; the observations (judged by :mod:`soak._report`)."""
    work = Path(tempfile.mkdtemp(prefix="actorscope-soak."))
    soak = _Run(settings, out)
    try:
        return await soak.run(work)
    finally:
        if settings.keep is not None:
            _dump(soak.seen, work / "events.jsonl")
            (work / "audit.json").write_text(json.dumps(soak.seen.audit, indent=0))
            settings.keep.mkdir(parents=True, exist_ok=True)
            shutil.copytree(work, settings.keep, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
