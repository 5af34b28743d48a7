"""The console in a real headless Chromium (Debian's), driven by Playwright.

Signs in, adds a grant, sees a denial appear in the audit page after a denied check, removes
a writer, and is refused a form without its CSRF token. A screenshot of each page is kept in
the test's tmp dir. Without Chromium the test skips with one reason, unless
``ACTORSCOPE_REQUIRE_BROWSER=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actorscope.agents import Agent
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
GROUP = "group:telegram:-100200"


def _browser_or_skip() -> None:
    missing = ""
    if not CHROMIUM.exists():
        missing = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    else:
        try:
            import playwright.async_api  # noqa: F401 - only whether it imports
        except ModuleNotFoundError:
            missing = "playwright is not installed (pip install -e '.[test]')"
    if missing and os.environ.get("ACTORSCOPE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"ACTORSCOPE_REQUIRE_BROWSER=1 but {missing}")
    if missing:
        pytest.skip(missing)


@pytest.mark.sqlite_only("the subject is the console in a browser; its API runs on both dialects")
async def test_an_operator_manages_grants_writers_and_sees_denials_in_a_browser(
    agent: Agent,
    store: GrantStore,
    keys: dict[str, str],
    live_server: str,
    tmp_path: Path,
) -> None:
    """Sign in, add a grant (the type must be chosen), see its row and a denial in the audit
    page in their columns, remove a writer (confirmed on a second page), CSRF refused."""
    _browser_or_skip()
    from playwright.async_api import async_playwright

    await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="42")
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="43")
    shots = tmp_path / "screenshots"
    shots.mkdir()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = await browser.new_page(viewport={"width": 390, "height": 844})
            page.set_default_timeout(10_000)
            await page.goto(f"{live_server}/console")
            await page.screenshot(path=shots / "login.png", full_page=True)
            await page.fill("input[name=key]", keys["operator"])
            await page.click("button[type=submit]")
            await page.wait_for_url("**/console/agents")
            assert "main" in await page.inner_text("main")
            await page.screenshot(path=shots / "agents.png", full_page=True)

            await page.goto(f"{live_server}/console/grants")
            kind = "#add-grant select[name=config_type]"
            # No type is chosen for the operator (a '*' grant is picked, never defaulted to).
            assert await page.eval_on_selector(kind, "select => select.value") == ""
            await page.fill("#add-grant input[name=scope]", GROUP)
            await page.fill("#add-grant input[name=sender_id]", "77")
            await page.click("#add-grant button[type=submit]")
            assert await page.eval_on_selector(kind, "select => !select.validity.valid")
            await page.select_option(kind, "cron")
            await page.click("#add-grant button[type=submit]")
            await page.wait_for_url("**/console/grants")
            table = await page.inner_text("table")
            assert "77" in table
            assert "cron" in table
            await page.screenshot(path=shots / "grants.png", full_page=True)

            policy = PermissionPolicy(store)
            denied = Identity(
                user_id=GROUP,
                sender_id="99",
                channel="telegram",
                peer_kind=PeerKind.GROUP,
                tenant_id=agent.tenant_id,
                agent_id=agent.id,
            )
            assert not (await policy.check_file_writer(denied)).allowed
            # The denial's audit row is queued; reload until it shows (bounded), no sleep-assert.
            for _ in range(20):
                await page.goto(f"{live_server}/console/audit?reason=no_grant")
                if "99" in await page.inner_text("table"):
                    break
                await page.wait_for_timeout(100)
            assert "99" in await page.inner_text("table")
            counts = await page.inner_text(".counts")
            assert "no_grant: 1" in counts
            assert "allow:" not in counts  # grant changes are no refusals
            await page.screenshot(path=shots / "audit.png", full_page=True)

            # The grant change names its grantee, permission and who made it, in their columns.
            await page.goto(f"{live_server}/console/audit?action=grant.add&sender_id=77")
            heads = await page.eval_on_selector_all(
                "thead th", "cells => cells.map(c => c.innerText)"
            )
            cells = await page.eval_on_selector_all(
                "tbody tr:first-child td", "cells => cells.map(c => c.innerText)"
            )
            row = dict(zip(heads, cells, strict=True))
            assert (row["Sender"], row["Permission"], row["Reason"]) == ("77", "allow", "")
            assert (row["Scope"], row["Type"], row["Changed by"]) == (
                GROUP,
                "cron",
                "operator-user",
            )

            await page.goto(f"{live_server}/console/writers")
            assert "Remove 43" in await page.inner_text("main")
            await page.click("text=Remove 43")
            await page.wait_for_url("**/console/writers/remove")
            assert f"Remove 43 as a writer of {GROUP}?" in await page.inner_text("main")
            await page.screenshot(path=shots / "confirm.png", full_page=True)
            await page.click("text=Yes, remove")
            await page.wait_for_url("**/console/writers")
            text = await page.inner_text("main")
            assert "Remove 42" in text
            assert "Remove 43" not in text
            await page.screenshot(path=shots / "writers.png", full_page=True)

            await page.goto(f"{live_server}/console/grants")
            await page.evaluate("document.querySelector('#add-grant input[name=csrf]').remove()")
            await page.fill("#add-grant input[name=scope]", GROUP)
            await page.fill("#add-grant input[name=sender_id]", "88")
            await page.select_option(kind, "cron")
            await page.click("#add-grant button[type=submit]")
            assert "CSRF" in await page.inner_text("main")
            await page.screenshot(path=shots / "csrf-refused.png", full_page=True)
        finally:
            await browser.close()
    assert [g.sender_id for g in await store.list(config_type="cron")] == ["77"]
    assert sorted(p.name for p in shots.iterdir()) == [
        "agents.png",
        "audit.png",
        "confirm.png",
        "csrf-refused.png",
        "grants.png",
        "login.png",
        "writers.png",
    ]


async def test_an_operator_links_and_unlinks_accounts_in_a_browser(
    agent: Agent, keys: dict[str, str], live_server: str, tmp_path: Path
) -> None:
    """The links page: link a Telegram and a Discord account, see one person in the table,
    unlink one (confirmed on a second page)."""
    _browser_or_skip()
    from playwright.async_api import async_playwright

    discord = "discord:990000000000000001"
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = await browser.new_page(viewport={"width": 390, "height": 844})
            page.set_default_timeout(10_000)
            await page.goto(f"{live_server}/console")
            await page.fill("input[name=key]", keys["operator"])
            await page.click("button[type=submit]")
            await page.wait_for_url("**/console/agents")
            await page.click("text=Links")
            await page.wait_for_url("**/console/links")
            await page.fill("#add-link input[name=account]", "telegram:42")
            await page.fill("#add-link input[name=other]", discord)
            await page.click("#add-link button[type=submit]")
            await page.wait_for_url("**/console/links")
            table = await page.inner_text("table")
            assert "telegram:42" in table
            assert discord in table
            assert table.count("person:") == 2
            await page.screenshot(path=tmp_path / "links.png", full_page=True)
            await page.click(f"text=Unlink {discord}")
            await page.wait_for_url("**/console/links/remove")
            assert f"Unlink {discord} from its person?" in await page.inner_text("main")
            await page.click("text=Yes, remove")
            await page.wait_for_url("**/console/links")
            table = await page.inner_text("table")
            assert discord not in table
            assert "telegram:42" in table
        finally:
            await browser.close()
