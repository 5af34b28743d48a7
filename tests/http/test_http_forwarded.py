"""Forwarded headers are believed only from ``[http] trusted_proxies`` (issue 26, defect 4): the
failed-login limit counts the socket's peer, so ``X-Forwarded-For`` neither evades it nor aims
it at another address."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from tests.http.conftest import bearer, serving

from actorscope.agents import Agent
from actorscope.bots import BotConfig, HttpSection
from actorscope.errors import ConfigError
from actorscope.http import create_app
from actorscope.store import Database

pytestmark = pytest.mark.sqlite_only(
    "the subject is which peer the login limit counts, not the dialect"
)

WRONG = "as_" + "0" * 12 + "_" + "x" * 43


def _client(url: str, local: str = "127.0.0.1") -> httpx.AsyncClient:
    """A client connecting from the loopback address ``local`` (127.0.0.2 is another peer)."""
    transport = httpx.AsyncHTTPTransport(local_address=local)
    return httpx.AsyncClient(base_url=url, transport=transport, timeout=10)


async def test_x_forwarded_for_neither_evades_nor_aims_the_failed_login_limit(
    db: Database, agent: Agent, keys: dict[str, str]
) -> None:
    """No trusted proxy (the default): 30 wrong keys, each claiming another address, give 10
    x 401 then 429 for the real peer; 127.0.0.2, the address they claimed, is not locked."""
    async with serving(create_app(db)) as url:
        async with _client(url) as http:
            statuses = [
                (
                    await http.get(
                        "/v1/whoami",
                        headers={**bearer(WRONG), "X-Forwarded-For": f"198.51.100.{n}"},
                    )
                ).status_code
                for n in range(30)
            ]
            aimed = [
                (
                    await http.get(
                        "/v1/whoami", headers={**bearer(WRONG), "X-Forwarded-For": "127.0.0.2"}
                    )
                ).status_code
                for _ in range(3)
            ]
        async with _client(url, "127.0.0.2") as victim:
            answer = await victim.get("/v1/whoami", headers=bearer(keys["owner"]))
    assert statuses == [401] * 10 + [429] * 20
    assert aimed == [429] * 3
    assert answer.status_code == 200


async def test_a_trusted_proxy_names_the_client(
    db: Database, agent: Agent, keys: dict[str, str]
) -> None:
    """trusted_proxies = [127.0.0.1]: the rightmost X-Forwarded-For address that is no trusted
    proxy is the client; it is locked out alone, whatever a client wrote left of it."""
    section = HttpSection(trusted_proxies=["127.0.0.1/32"])
    async with serving(create_app(db), section) as url, _client(url) as http:
        for n in range(10):
            failed = await http.get(
                "/v1/whoami",
                headers={**bearer(WRONG), "X-Forwarded-For": f"10.0.0.{n}, 203.0.113.7"},
            )
            assert failed.status_code == 401
        locked = await http.get(
            "/v1/whoami",
            headers={**bearer(keys["owner"]), "X-Forwarded-For": "203.0.113.7, 127.0.0.1"},
        )
        other = await http.get(
            "/v1/whoami", headers={**bearer(keys["owner"]), "X-Forwarded-For": "198.51.100.4"}
        )
        direct = await http.get("/v1/whoami", headers=bearer(keys["owner"]))
    assert locked.status_code == 429
    assert other.status_code == 200
    assert direct.status_code == 200


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('["*"]', "must be a list of IP addresses or networks (like 10.0.0.5 or 10.0.0.0/24)"),
        ('["10.0.0.1/8"]', "got '10.0.0.1/8'"),
        ('"10.0.0.1"', "must be a list of IP addresses or networks, got '10.0.0.1'"),
        ("[1]", "got 1"),
    ],
)
def test_bad_trusted_proxies_are_one_clear_error(
    tmp_path: Path, backend: str, value: str, message: str
) -> None:
    """Anything but a list of addresses or networks is refused with one line naming the key."""
    path = tmp_path / "bot.toml"
    path.write_text(f'handler = "m:f"\n\n[http]\ntrusted_proxies = {value}\n')
    with pytest.raises(ConfigError, match=r"http\.trusted_proxies") as info:
        BotConfig.load(path, require_bots=False)
    assert message in str(info.value)


def test_trusted_proxies_are_addresses_and_networks(tmp_path: Path, backend: str) -> None:
    """Addresses and networks of both families are kept, in their canonical spelling."""
    path = tmp_path / "bot.toml"
    path.write_text(
        'handler = "m:f"\n\n[http]\ntrusted_proxies = ["10.0.0.0/8", "::1", "192.0.2.7"]\n'
    )
    config = BotConfig.load(path, require_bots=False)
    assert config.http is not None
    assert config.http.trusted_proxies == ("10.0.0.0/8", "::1/128", "192.0.2.7/32")
