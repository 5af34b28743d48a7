"""The kit runs the user's own ``actorscope run`` handler and records its policy's decisions.

The notes bot of ``examples/telegram_bot.py`` is served by its ``module:function`` string (the
loader ``actorscope run`` uses), with ``current_services()`` bound; ``should_allow`` /
``should_deny`` see the decisions its policy makes, not a stub's.
"""

from __future__ import annotations

from actorscope.permissions import Decision, PermissionPolicy, Reason
from actorscope.testing import AgentEnv, Grants
from actorscope.testing.grants import Binder


async def test_policy_observer_sees_every_decision_warm_or_cold(
    actorscope_env: AgentEnv, grants: Grants, bind: Binder
) -> None:
    """A policy's observer is told each decision: direct, cold group, warm group, each check."""
    seen: list[Decision] = []
    policy = PermissionPolicy(actorscope_env.store, observer=seen.append)
    scope = "group:telegram:-100123"
    await grants.allow(scope, "4242")
    with bind(sender="4242"):
        await policy.check_file_writer()
    with bind(sender="4242", scope=scope):
        await policy.check_file_writer()  # cold: the lookup
        await policy.check_file_writer()  # warm: from the cache
        await policy.check_cron()
        await policy.check_context_files()
    with bind(sender="5151", scope=scope):
        await policy.check("file_writer")
    assert [(d.config_type, d.reason) for d in seen] == [
        ("file_writer", Reason.NOT_GROUP_CONTEXT),
        ("file_writer", Reason.GRANTED),
        ("file_writer", Reason.GRANTED),
        ("cron", Reason.GRANTED),
        ("context_files", Reason.GRANTED),
        ("file_writer", Reason.NO_GRANT),
    ]
