"""RunInfo binding: nested, restored on error, inherited by tasks, type-checked."""

from __future__ import annotations

import asyncio

import pytest

from actorscope.messages import RunRequest
from actorscope.propagation import RunInfo
from actorscope.propagation._keys import META_ORIGIN_TRACE_ID


def test_bind_nests_and_restores() -> None:
    """An inner binding shadows the outer one and the outer returns afterwards."""
    assert RunInfo.current() is None
    with RunInfo(session_key="a").bind():
        with RunInfo(session_key="b").bind():
            assert RunInfo.current() == RunInfo(session_key="b")
        assert RunInfo.current() == RunInfo(session_key="a")
    assert RunInfo.current() is None


def test_binding_is_restored_after_an_error() -> None:
    """An exception in the body does not leave the run bound."""
    with pytest.raises(RuntimeError), RunInfo(trace_id="t").bind():
        raise RuntimeError
    assert RunInfo.current() is None


async def _seen() -> RunInfo | None:
    await asyncio.sleep(0)
    return RunInfo.current()


async def test_tasks_inherit_the_binding() -> None:
    """A task created inside the binding sees it; one created outside does not."""
    outside = asyncio.create_task(_seen())
    with RunInfo(thread_id="9").bind():
        inside = asyncio.create_task(_seen())
        seen_outside = await outside
        assert (await inside) == RunInfo(thread_id="9")
    assert seen_outside is None


def test_run_info_for_a_request_keeps_its_trace_or_starts_one() -> None:
    """for_request takes the session and thread, and the origin's trace id, else a new one."""
    request = RunRequest(
        channel="telegram",
        sender_id="42",
        chat_id="-100",
        content="hi",
        user_id="group:telegram:-100",
        session_key="s",
        thread_id="7",
        metadata={META_ORIGIN_TRACE_ID: "trace-1"},
    )
    assert RunInfo.for_request(request) == RunInfo(
        session_key="s", trace_id="trace-1", thread_id="7"
    )
    fresh = request.model_copy(update={"metadata": {}})
    assert RunInfo.for_request(fresh, new_trace_id=lambda: "new") == RunInfo("s", "new", "7")
    started = RunInfo.for_request(fresh).trace_id
    assert len(started) == 32
    assert started != RunInfo.for_request(fresh).trace_id
