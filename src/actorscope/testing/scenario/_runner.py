"""Run a scenario: build both worlds, play each step through the simulators, check it.

A failed expectation raises :class:`ScenarioFailure` (an ``AssertionError``) whose message
starts with ``<file>:<line>:`` of the step and shows expected against actual. Each step's
result is also returned as a :class:`StepOutcome` (the demo prints them as a table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from actorscope.bots import load_handler
from actorscope.channels import Outcome
from actorscope.errors import ConfigError
from actorscope.identity import Identity
from actorscope.messages import RunRequest
from actorscope.permissions import LinkMode
from actorscope.testing._expect import Expected, ObservationKind, diff
from actorscope.testing._harness import AgentEnv, SimulatedEvent, Simulator, Turn
from actorscope.testing.scenario._loader import LoadedScenario, ScenarioError
from actorscope.testing.scenario._model import Expect, HttpStep, Step
from actorscope.testing.scenario._world import World

__all__ = ["ScenarioFailure", "StepOutcome", "run_scenario"]


class ScenarioFailure(AssertionError):
    """A scenario step did not do what its ``expect`` says."""


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What one step became: where, who, scope and actor (``sender_id``), and the decision."""

    index: int
    platform: str
    chat: str
    who: str
    scope: str
    actor: str
    action: str
    decision: str
    reason: str


_IDENTITY_FIELDS = (
    "user_id",
    "sender_id",
    "actor_id",
    "session_key",
    "sender_kind",
    "peer_kind",
    "chat_id",
    "thread_id",
    "role",
)


_CHAIN_LABELS = {
    "subagent_announce": "sub-agent",
    "delegate_announce": "delegate",
    "teammate_dispatch": "teammate",
    "session_send": "session_send",
    "ticker": "ticker",
}


class _Player:
    """Plays the steps of one loaded scenario in one world."""

    def __init__(self, loaded: LoadedScenario, world: World) -> None:
        self.loaded = loaded
        self.world = world
        self.events: list[SimulatedEvent | None] = []
        self.places: list[tuple[str, str, str]] = []
        self.step: Step | None = None
        spec = loaded.scenario.setup.handler
        if spec is None:
            world.telegram.handler(self._bot)
            world.discord.handler(self._bot)
            return
        try:
            handler = load_handler(spec, loaded.path.parent)
        except ConfigError as exc:
            raise ScenarioError(f"{loaded.at('setup', 'handler')}: setup.handler: {exc}") from None
        world.telegram.serve(handler)
        world.discord.serve(handler)

    async def _bot(self, turn: Turn) -> None:
        step = self.step
        if step is None:
            return
        if step.action is not None:
            await turn.check(step.action)
        if step.reply is not None:
            await turn.reply(step.reply)

    def fail(self, index: int, label: str, problem: str) -> ScenarioFailure:
        at = self.loaded.at("steps", index)
        return ScenarioFailure(f"{at}: step {index + 1} ({label}): {problem}")

    async def play(self, index: int, step: Step) -> StepOutcome:
        parent = self._parent(index, step)  # its errors already name their file:line
        self.step = step
        try:
            event, sim = await self.world.event(step, parent, self._replied(index, step))
        except ScenarioError as exc:
            raise ScenarioError(f"{self.loaded.at('steps', index, step.kind)}: {exc}") from None
        finally:
            self.step = None
        self.events.append(event)
        if event.request is None and step.expect.ignored is None and (step.action or step.reply):
            raise self.fail(
                index, event.label, f"was ignored ({event.ignored}), so the bot never acted"
            )
        self.check(index, step.expect, event, sim)
        return self.outcome(index, step, event)

    async def play_http(self, index: int, step: Step, http: HttpStep) -> StepOutcome:
        env = self.world.env
        identity = replace(
            Identity.http(http.user, role=http.role, tenant_id=env.agent.tenant_id),
            agent_id=env.agent.id,
        )
        sim = self.world.telegram
        sim.expect.begin()
        event = SimulatedEvent(f"http call by {http.user}", {"user": http.user})
        if step.action is not None:
            await sim.check(step.action, identity)
        await env.db.settle_audit()  # as every kit event: its audit rows are written
        event.observations = sim.expect.settle(event.label)
        event.request = _http_request(identity)
        self.events.append(event)
        self.check(index, step.expect, event, sim)
        return self.outcome(index, step, event)

    def _parent(self, index: int, step: Step) -> SimulatedEvent | None:
        spec = step.chain
        if spec is None:
            return None
        number = spec.of if spec.of is not None else index
        if not 1 <= number <= index:
            raise ScenarioError(
                f"{self.loaded.at('steps', index, step.kind)}: steps[{index}].{step.kind}.of: "
                f"must name an earlier step (1..{index}), got {number}"
            )
        parent = self.events[number - 1]
        if parent is None or parent.request is None:
            raise self.fail(index, step.kind, f"step {number} ran no turn to propagate from")
        return parent

    def _replied(self, index: int, step: Step) -> Mapping[str, Any] | None:
        """The Telegram message of the earlier step a message step replies to."""
        spec = step.telegram
        if spec is None or spec.reply_to is None:
            return None
        number = spec.reply_to
        if number > index:
            raise ScenarioError(f"reply_to: must name an earlier step (1..{index}), got {number}")
        event = self.events[number - 1]
        message = None if event is None else event.payload.get("message")
        if not isinstance(message, Mapping) or "message_id" not in message:
            raise ScenarioError(f"reply_to: step {number} is no Telegram message")
        return message

    def check(self, index: int, expect: Expect, event: SimulatedEvent, sim: Simulator) -> None:
        label = event.label
        if expect.ignored is not None:
            got = "" if event.ignored is None else str(event.ignored)
            if got != expect.ignored:
                actual = f"ignored ({got})" if got else "handled by the bot"
                raise self.fail(index, label, f"expected ignored ({expect.ignored}), {actual}")
            return
        # A writer command is answered by the runner: replies, but no turn.
        answered = event.outcome is Outcome.WRITER_COMMAND
        if event.request is None and (
            expect.identity or expect.decision or (expect.replies and not answered)
        ):
            what = "was a writer command" if answered else f"was ignored ({event.ignored})"
            raise self.fail(index, label, f"{what}, expected a turn")
        if expect.identity is not None and event.request is not None:
            request = event.request
            fields: dict[str, str] = {
                name: str(getattr(request, name, "")) for name in _IDENTITY_FIELDS
            }
            fields["actor_id"] = request.identity().actor_id
            wrong = [
                f"  {name}: expected {want!r}, got {fields[name]!r}"
                for name, want in expect.identity.model_dump(exclude_none=True).items()
                if fields[name] != want
            ]
            if wrong:
                raise self.fail(index, label, "identity differs:\n" + "\n".join(wrong))
        wanted: list[Expected] = []
        if expect.decision is not None:
            fields = {"allowed": "true" if expect.decision.allowed else "false"}
            if expect.decision.reason is not None:
                fields["reason"] = expect.decision.reason
            wanted.append(Expected(ObservationKind.DECISION, fields))
            problems = diff(wanted, event.decisions)
            if problems:
                raise self.fail(index, label, "decision differs:\n" + problems)
        if expect.replies is not None:
            replies = [
                Expected(ObservationKind.SEND, self.world.reply_fields(sim, reply))
                for reply in expect.replies
            ]
            problems = diff(replies, event.sent)
            if problems:
                raise self.fail(index, label, "replies differ:\n" + problems)

    def outcome(self, index: int, step: Step, event: SimulatedEvent) -> StepOutcome:
        decided = event.decisions[0].fields if event.decisions else {}
        if decided:
            verdict = "allowed" if decided.get("allowed") == "true" else "denied"
        elif event.outcome is Outcome.WRITER_COMMAND:
            verdict = "writer command"
        else:
            verdict = f"ignored ({event.ignored})" if event.ignored else "-"
        request = event.request
        message = event.message
        scope = request.user_id if request else (message.user_id if message else "")
        actor = request.sender_id if request else (message.sender_id if message else "")
        spec = step.chain
        if spec is not None:
            platform, chat, who = self.places[(spec.of or index) - 1]
            who = f"{_CHAIN_LABELS[step.kind]} of {who}"
        else:
            platform, chat, who = self.world.describe(step)
        self.places.append((platform, chat, who))
        return StepOutcome(
            index=index + 1,
            platform=platform,
            chat=chat,
            who=who,
            scope=scope,
            actor=actor,
            action=step.action or decided.get("action", "-"),
            decision=verdict,
            reason=decided.get("reason", ""),
        )


def _http_request(identity: Identity) -> RunRequest:
    """The run an authenticated HTTP call becomes (no session key, no chat)."""
    return RunRequest(
        session_key="",
        user_id=identity.user_id,
        sender_id=identity.sender_id,
        role=identity.role,
        channel=identity.channel,
        chat_id="",
        sender_kind=identity.sender_kind,
        tenant_id=identity.tenant_id,
        agent_id=identity.agent_id,
    )


async def run_scenario(
    loaded: LoadedScenario,
    where: Path | AgentEnv,
    on_step: Callable[[StepOutcome], None] | None = None,
) -> list[StepOutcome]:
    """Play ``loaded`` on a new database at ``where`` (its agent is the scenario's), or in an
    open :class:`AgentEnv`; every step is checked as it runs, and with ``setup.probe`` its
    handler is probed after the steps."""
    if isinstance(where, AgentEnv):
        outcomes = await _play(loaded, where, on_step)
    else:
        setup = loaded.scenario.setup
        async with AgentEnv.open(where, agent_key=setup.agent, links=LinkMode(setup.links)) as env:
            outcomes = await _play(loaded, env, on_step)
    await _probe(loaded)
    return outcomes


async def _play(
    loaded: LoadedScenario, env: AgentEnv, on_step: Callable[[StepOutcome], None] | None
) -> list[StepOutcome]:
    outcomes: list[StepOutcome] = []
    async with World(loaded, env) as world:
        player = _Player(loaded, world)
        for index, step in enumerate(loaded.scenario.steps):
            if step.http is not None:
                outcome = await player.play_http(index, step, step.http)
            else:
                outcome = await player.play(index, step)
            outcomes.append(outcome)
            if on_step is not None:
                on_step(outcome)
    return outcomes


async def _probe(loaded: LoadedScenario) -> None:
    """With ``setup.probe``: probe ``setup.handler``; any case that did not hold fails, and so
    does a probe that reached none of the handler's own commands."""
    setup = loaded.scenario.setup
    if not setup.probe or setup.handler is None:
        return
    # Imported here: importing actorscope.testing (which the probe does) imports this module.
    from actorscope.testing._probe_run import probe

    texts = [s.telegram.text for s in loaded.scenario.steps if s.telegram is not None]
    commands = [t for t in texts if t and t.startswith("/")]
    report = await probe(
        setup.handler, search_dir=loaded.path.parent, commands=commands, agent=setup.agent
    )
    if report.failures:
        first = report.failures[0]
        raise ScenarioFailure(
            f"{loaded.at('setup', 'probe')}: setup.probe: {report.summary()}; first: "
            f"{first.event} x {first.command}: {'; '.join(first.problems)}"
        )
    if report.untested:  # a clean probe means "tried and held", never "nothing was tried"
        raise ScenarioFailure(
            f"{loaded.at('setup', 'probe')}: setup.probe: not tested: {report.untested[0]}"
        )
