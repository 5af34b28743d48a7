"""Judging a run: the invariants, checked against what was seen, and one table of figures.

- exactly once: every event that should produce a turn or an answer has exactly one; every
  event the bot should ignore has none (losses and doubles the platform causes are excused,
  named and counted: an update in flight on a killed worker, a Discord event sent to a shard
  whose session is down or died with it);
- audit: every decision the handler was told (a denial or a fail-open allow) has its row, every
  grant change the API confirmed has its row;
- freshness: a revoke is seen by every worker within 1 s; no denial for a grant, no allow for
  a revoked one, later than 1 s after the API confirmed the change;
- recovery: the workers are whole again after each fault.
"""

from __future__ import annotations

import bisect
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from soak._model import Expect, Reply, Sent
from soak._run import Observed

__all__ = ["Report", "judge"]

#: The freshness bound of docs/design.md.
BOUND = 1.0
_DENIALS = frozenset(
    {
        "no_grant",
        "denied_by_grant",
        "no_agent",
        "empty_sender",
        "synthetic_sender",
        "placeholder_sender",
        "invalid_identity",
        "store_error_fail_closed",
    }
)
_FAIL_OPEN = "store_error_fail_open"
_CLOSING = 2.0  # seconds a killed worker's gateway socket may still look open
_WINDOW = 10.0  # an event sent to a killed worker's session this long before the kill


@dataclass(order=True, slots=True)
class Failure:
    """One broken invariant, at the time it broke."""

    at: float
    what: str = field(compare=False)


@dataclass(slots=True)
class Report:
    """The table's rows and the failures, first one first."""

    rows: list[tuple[str, str]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No invariant broke."""
        return not self.failures

    def row(self, name: str, value: str) -> None:
        """Add one line of the table."""
        self.rows.append((name, value))

    def fail(self, at: float, what: str) -> None:
        """Record a broken invariant."""
        self.failures.append(Failure(at, what))

    def render(self) -> str:
        """The table, then the verdict."""
        width = max(len(name) for name, _ in self.rows)
        lines = ["", "soak result", "-" * (width + 50)]
        lines += [f"{name:<{width}}  {value}" for name, value in self.rows]
        lines.append("-" * (width + 50))
        lines += [f"note: {note}" for note in self.notes]
        if self.failures:
            ordered = sorted(self.failures)
            lines.append(f"FAIL ({len(ordered)} broken): first: {ordered[0].what}")
            lines += [f"  also: {f.what}" for f in ordered[1:10]]
            if len(ordered) > 10:
                lines.append(f"  ... and {len(ordered) - 10} more")
        else:
            lines.append("PASS: every invariant held")
        return "\n".join(lines)


def _percentiles(values: Sequence[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    p50, p99, top = (round(value * 1000) for value in (at(0.5), at(0.99), ordered[-1]))
    return f"p50 {p50} ms, p99 {p99} ms, max {top} ms"


def _group(scope: str) -> str:
    """The grant group of a decision's scope: the Telegram group, or the Discord guild."""
    if scope.startswith("guild:"):
        return ":".join(scope.split(":", 2)[:2])
    return scope


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


class _Timeline:
    """A pair's grant over time, from the operator's confirmed changes."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.states: list[bool] = []
        self.uncertain: list[tuple[float, float]] = []

    def add(self, at: float, granted: bool) -> None:
        self.times.append(at)
        self.states.append(granted)

    def judge(self, decided: float) -> bool | None:
        """The state that must be seen at ``decided``, or ``None`` (within the bound of a
        change, or near an unconfirmed one)."""
        if any(lo - BOUND <= decided <= hi + BOUND for lo, hi in self.uncertain):
            return None
        index = bisect.bisect_right(self.times, decided) - 1
        if index < 0:
            return False
        if decided - self.times[index] <= BOUND:
            return None
        return self.states[index]


def _fault_near(seen: Observed, at: float, slot: int) -> str:
    """The fault that kept worker ``slot`` from its store (or down) around ``at``, if any."""
    for fault in seen.faults:
        end = fault.recovered if fault.recovered is not None else fault.at + 90.0
        if not fault.at - BOUND <= at <= end:
            continue
        if fault.kind in ("pg_restart", "listen_kill") or fault.target == f"worker {slot}":
            return fault.kind
    return ""


def _excuse(seen: Observed, sent: Sent) -> str:
    """Why a missing or doubled reply to ``sent`` is the platform's doing, if it is."""
    if sent.excuse:
        return sent.excuse
    if sent.platform == "telegram":
        for ids in seen.kills.values():
            if sent.update_id in ids:
                return "in flight on a worker killed with it (redelivered)"
        delivery = seen.dispatcher.deliveries.get(sent.update_id) if seen.dispatcher else None
        if sent.probe and delivery is not None and delivery.gave_up:
            return "probe to a worker that was down"
        return ""
    slot = next((s for s in seen.slots if s.index == sent.slot), None)
    if slot is None:
        return ""
    for instance in slot.instances:
        killed = instance.killed
        # Sent before the kill, or just after it while the dead process's socket still looked
        # open to the gateway (the kernel closes it a moment later).
        if killed is None or not instance.started <= sent.sent <= killed + _CLOSING:
            continue
        if killed - sent.sent <= _WINDOW:
            return "in the gateway session of a worker killed with it (not redelivered)"
    return ""


def _exactly_once(seen: Observed, report: Report) -> dict[int, int]:
    """Check every event's replies; the turns handled per worker pid."""
    assert seen.driver is not None
    turns: dict[int, int] = defaultdict(int)
    counts = {"lost": 0, "doubled": 0, "excused": 0, "unexpected": 0, "ok": 0}
    excused: dict[str, int] = defaultdict(int)
    for sent in seen.driver.sent.values():
        for reply in sent.replies:
            turns[reply.pid] += 1
        wanted = 0 if sent.expect is Expect.NOTHING else 1
        got = len(sent.replies)
        if got == wanted:
            counts["ok"] += 1
            continue
        excuse = _excuse(seen, sent)
        if excuse and wanted:
            counts["excused"] += 1
            kind = "answered twice" if got > 1 else "lost"
            excused[f"{sent.platform} {kind}: {excuse}"] += 1
            continue
        if wanted and not got:
            counts["lost"] += 1
            report.fail(sent.sent, f"{sent.platform} {sent.doing} {sent.key} got no reply (lost)")
        elif wanted:
            counts["doubled"] += 1
            pids = ", ".join(str(r.pid) for r in sent.replies)
            report.fail(
                sent.sent,
                f"{sent.platform} {sent.doing} {sent.key} got {got} replies (doubled; pids {pids})",
            )
        else:
            counts["unexpected"] += 1
            report.fail(sent.sent, f"{sent.platform} {sent.doing} {sent.key} was answered")
    for reply in seen.driver.stray:
        report.fail(reply.seen, f"a reply to no event: {reply.fields}")
    total = len(seen.driver.sent)
    report.row(
        "exactly-once effects",
        f"{counts['ok']}/{total} events as expected; lost {counts['lost']}, "
        f"doubled {counts['doubled']}, answered-but-ignorable {counts['unexpected']}, "
        f"stray replies {len(seen.driver.stray)}",
    )
    if excused:
        report.row(
            "  excused (the platform's)",
            "; ".join(f"{n} {why}" for why, n in sorted(excused.items())),
        )
    return turns


def _decisions(seen: Observed) -> list[tuple[Sent, Reply]]:
    assert seen.driver is not None
    return [(s, r) for s in seen.driver.sent.values() for r in s.replies if "r" in r.fields]


def _audit(seen: Observed, report: Report) -> None:
    """Every denial and fail-open has its row; every confirmed grant change has its row."""
    rows_by_key: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    changes_by_key: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for row in seen.audit:
        detail = row.get("detail") or {}
        action = str(row.get("action", ""))
        scope = str(row.get("user_id", row.get("scope", "")))
        if action.startswith("check."):
            sender = str(detail.get("sender_id", row.get("sender_id", "")))
            rows_by_key[(scope, sender, str(row.get("reason")))].append(_stamp(row["created_at"]))
        elif action.startswith("grant."):
            grantee = str(detail.get("grantee", row.get("sender_id", "")))
            kind = "revoke" if action == "grant.remove" else "grant"
            changes_by_key[(scope, grantee, kind)].append(_stamp(row["created_at"]))
    for times in rows_by_key.values():
        times.sort()
    missing = fail_open = fail_open_missing = denials = 0
    for sent, reply in sorted(_decisions(seen), key=lambda item: item[1].decided):
        reason = reply.reason
        if reason not in _DENIALS and reason != _FAIL_OPEN:
            continue
        denials += reason in _DENIALS
        fail_open += reason == _FAIL_OPEN
        times = rows_by_key.get((reply.fields.get("s", ""), reply.fields.get("a", ""), reason), [])
        match = next((t for t in times if abs(t - reply.decided) <= 5.0), None)
        if match is None:
            missing += 1
            fail_open_missing += reason == _FAIL_OPEN
            report.fail(
                reply.decided,
                f"decision {reason} for {reply.fields.get('a')} in {reply.fields.get('s')} "
                f"({sent.key}, worker pid {reply.pid}) has no audit row",
            )
        else:
            times.remove(match)
    report.row(
        "audit: decisions",
        f"{denials} denials + {fail_open} fail-open allows told to the handler; "
        f"{missing} without a row ({fail_open_missing} of the fail-opens)",
    )
    confirmed = [c for c in seen.changes if c.ok]
    lacking = 0
    for change in confirmed:
        times = changes_by_key.get((change.scope, change.sender_id, change.action), [])
        match = next((t for t in times if change.sent - 1 <= t <= change.answered + 1), None)
        if match is None:
            lacking += 1
            report.fail(
                change.sent,
                f"{change.action} of {change.sender_id} in {change.scope} has no audit row",
            )
        else:
            times.remove(match)
    report.row(
        "audit: grant changes",
        f"{len(confirmed)} confirmed by the API, {lacking} without a row "
        f"({len(seen.changes) - len(confirmed)} refused or unanswered; "
        f"{len(seen.audit)} rows in all)",
    )


def _freshness(seen: Observed, report: Report) -> None:
    timelines: dict[tuple[str, str], _Timeline] = defaultdict(_Timeline)
    for change in seen.changes:
        pair = (change.scope.removesuffix(":*"), change.sender_id)
        if change.ok:
            timelines[pair].add(change.answered, change.action == "grant")
        elif change.status == 0 or change.status >= 500:
            timelines[pair].uncertain.append((change.sent, change.answered))
    stale_allow = wrong_deny = judged = 0
    for sent, reply in _decisions(seen):
        pair = (_group(reply.fields.get("s", "")), reply.fields.get("a", ""))
        if pair == seen.probe_pair:
            continue
        timeline = timelines.get(pair)
        must = False if timeline is None else timeline.judge(reply.decided)
        if must is None:
            continue
        judged += 1
        if reply.reason == "granted" and not must:
            stale_allow += 1
            report.fail(
                reply.decided,
                f"{sent.key}: allowed {pair[1]} in {pair[0]} more than {BOUND:g}s after a revoke "
                f"(worker pid {reply.pid})",
            )
        elif reply.reason == "no_grant" and must:
            wrong_deny += 1
            report.fail(
                reply.decided,
                f"{sent.key}: denied {pair[1]} in {pair[0]} more than {BOUND:g}s after a grant "
                f"(worker pid {reply.pid})",
            )
    report.row(
        "grant/decision agreement",
        f"{judged} decisions judged; {wrong_deny} denials for a current grant, "
        f"{stale_allow} allows after a revoke (past {BOUND:g}s)",
    )
    latencies: list[float] = []
    during: list[float] = []
    unseen = slow = 0
    for revoke in seen.revokes:
        for slot, latency in sorted(revoke.by_slot.items()):
            fault = _fault_near(seen, revoke.change.answered, slot)
            if fault:
                during.append(latency if latency is not None else float("inf"))
                continue
            if latency is None:
                unseen += 1
                report.fail(
                    revoke.change.answered,
                    f"revoke of {revoke.change.sender_id} in {revoke.change.scope} not seen by "
                    f"worker {slot} within the probe limit",
                )
                continue
            latencies.append(latency)
            if latency > BOUND:
                # A first denial this late is only a broken promise if an allow came after
                # the bound (the agreement check above fails those); else the probe waited
                # in the worker's queue.
                slow += 1
    report.row(
        "revoke seen by each worker",
        f"{len(latencies)} (revoke, worker) pairs over {len(seen.revokes)} revokes: "
        f"{_percentiles(latencies)}; {unseen} unseen"
        + (f"; {slow} first denied past {BOUND:g}s (queued, no stale allow)" if slow else ""),
    )
    if during:
        worst = max(during)
        shown = "never (within the probes)" if worst == float("inf") else f"{worst:.2f}s"
        report.row(
            "  ... while a fault hit it",
            f"{len(during)} pairs (store unreachable, restarting or the worker down): "
            f"slowest {shown}; not held to {BOUND:g}s",
        )


def _throughput(seen: Observed, report: Report, turns: dict[int, int]) -> None:
    assert seen.driver is not None
    span = max(1e-9, seen.stream_ended - seen.started)
    per_slot: dict[int, int] = defaultdict(int)
    for slot in seen.slots:
        for instance in slot.instances:
            per_slot[slot.index] += turns.get(instance.pid, 0)
    total = sum(per_slot.values())
    parts = ", ".join(f"w{slot} {n / span:.1f}/s" for slot, n in sorted(per_slot.items()))
    report.row(
        "throughput (turns)",
        f"{total / span:.1f}/s in all ({parts}); {len(seen.driver.sent)} events played, "
        f"{seen.driver.skipped} skipped, {seen.dispatcher.retries if seen.dispatcher else 0} "
        "webhook retries",
    )
    latencies = [
        s.replies[0].seen - s.sent
        for s in seen.driver.sent.values()
        if s.replies and not s.probe and s.expect is not Expect.NOTHING
    ]
    report.row("handling latency", _percentiles(latencies))


def _memory(seen: Observed, report: Report) -> None:
    """Peak resident memory per worker, and whether its longest-lived process kept growing:
    its last quarter against its second (the first is start-up)."""
    for slot in seen.slots:
        samples = [s for instance in slot.instances for s in instance.rss]
        if not samples:
            continue
        peak = max(kib for _, kib in samples) / 1024
        longest = max(slot.instances, key=lambda i: len(i.rss))
        rss = longest.rss
        quarter = max(1, len(rss) // 4)
        early = statistics.fmean(k for _, k in rss[quarter : 2 * quarter] or rss) / 1024
        late = statistics.fmean(k for _, k in rss[-quarter:]) / 1024
        minutes = (rss[-1][0] - rss[0][0]) / 60 if len(rss) > 1 else 0.0
        grows = late > early * 1.05
        trail = " ".join(f"{k / 1024:.0f}" for _, k in rss[:: max(1, len(rss) // 8)])
        report.row(
            f"RSS worker {slot.index}",
            f"peak {peak:.0f} MiB; its longest process ({minutes:.0f} min): {early:.0f} -> "
            f"{late:.0f} MiB after start-up ({'GROWS' if grows else 'flat'}); "
            f"over time (MiB): {trail}",
        )


def _database(seen: Observed, report: Report) -> None:
    sizes = seen.db_sizes
    if len(sizes) >= 2:
        span = sizes[-1][0] - sizes[0][0]
        per_hour = (sizes[-1][1] - sizes[0][1]) / max(span, 1e-9) * 3600
        trail = " ".join(f"{size / 2**20:.1f}" for _, size in sizes[:: max(1, len(sizes) // 8)])
        report.row(
            "database size",
            f"{sizes[0][1] / 2**20:.1f} -> {sizes[-1][1] / 2**20:.1f} MiB "
            f"({per_hour / 2**20:+.1f} MiB per hour of stream); over time (MiB): {trail}",
        )
    pruned = len(seen.audit) - seen.audit_left
    report.row(
        "audit retention",
        f"keep = {seen.keep}: {pruned} of {len(seen.audit)} rows pruned by the running bot "
        f"while the stream ran ({seen.audit_left} left)",
    )
    big = sorted(seen.tables.items(), key=lambda item: -item[1][1])[:5]
    report.row(
        "largest tables",
        ", ".join(f"{name} {rows} rows {size / 2**20:.1f} MiB" for name, (rows, size) in big),
    )


def _faults(seen: Observed, report: Report) -> None:
    for fault in seen.faults:
        offset = fault.at - seen.started
        if fault.recovery is None:
            report.fail(fault.at, f"fault {fault.kind} at {offset:.1f}s: never recovered")
            value = "NOT recovered"
        else:
            value = f"recovered in {fault.recovery:.2f}s"
        target = f" ({fault.target})" if fault.target else ""
        note = f" [{fault.note}]" if fault.note else ""
        report.row(f"fault {offset:6.1f}s {fault.kind}", f"{value}{target}{note}")


def _workers(seen: Observed, report: Report) -> None:
    restarts = sum(len(s.instances) - 1 for s in seen.slots)
    unclean = {pid: code for pid, code in seen.exit_codes.items() if code not in (0, -9, None)}
    errors = sum(len(lines) for lines in seen.error_lines.values())
    report.row(
        "workers",
        f"{len(seen.slots)} slots, {restarts} restarts; exit codes at the end: "
        f"{sorted(set(seen.exit_codes.values()), key=str)}; {errors} ERROR log lines",
    )
    for pid, code in unclean.items():
        report.fail(seen.stream_ended, f"worker pid {pid} exited with {code}")
    for pid, lines in seen.error_lines.items():
        report.notes.append(f"worker pid {pid}: {lines[0][:160]}")


_SECTIONS: tuple[Callable[[Observed, Report], Any], ...] = (_audit, _freshness, _memory, _database)


def judge(seen: Observed) -> Report:
    """Check every invariant and build the table."""
    report = Report()
    turns = _exactly_once(seen, report)
    for section in _SECTIONS:
        section(seen, report)
    _throughput(seen, report, turns)
    _faults(seen, report)
    _workers(seen, report)
    return report
