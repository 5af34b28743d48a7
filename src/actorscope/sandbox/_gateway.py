"""The emulated Discord gateway: one websocket per shard session, as Discord runs it.

HELLO, heartbeats and their ACKs (a socket that misses its heartbeat is closed with 4009),
IDENTIFY -> READY -> one GUILD_CREATE per guild of the shard, RESUME with the missed
dispatches replayed, INVALID_SESSION, and Discord's close codes. Payloads are JSON; with
``compress=zlib-stream`` in the URL (what discord.py asks for) every payload is one zlib
stream flushed with ``Z_SYNC_FLUSH``. Intents are honoured: without ``MESSAGE_CONTENT`` a
guild message that does not mention the bot arrives with empty content.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import zlib
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum, IntFlag

from aiohttp import WSMsgType, web

from actorscope.sandbox._world import JSON, World

__all__ = ["CloseCode", "Gateway", "Intent", "Session"]

_log = logging.getLogger("actorscope.sandbox.discord")

# Dispatches kept per session for RESUME; an older sequence number cannot resume.
_BACKLOG = 1000
_MAX_PAYLOAD = 15 * 1024


class Op(IntEnum):
    """Gateway opcodes."""

    DISPATCH = 0
    HEARTBEAT = 1
    IDENTIFY = 2
    PRESENCE_UPDATE = 3
    VOICE_STATE_UPDATE = 4
    RESUME = 6
    RECONNECT = 7
    REQUEST_GUILD_MEMBERS = 8
    INVALID_SESSION = 9
    HELLO = 10
    HEARTBEAT_ACK = 11


class CloseCode(IntEnum):
    """Discord's gateway close codes (the ones the emulator sends)."""

    UNKNOWN_ERROR = 4000
    UNKNOWN_OPCODE = 4001
    DECODE_ERROR = 4002
    NOT_AUTHENTICATED = 4003
    AUTHENTICATION_FAILED = 4004
    ALREADY_AUTHENTICATED = 4005
    SESSION_TIMED_OUT = 4009
    INVALID_SHARD = 4010
    INVALID_INTENTS = 4013
    DISALLOWED_INTENTS = 4014


class Intent(IntFlag):
    """The gateway intents the emulator filters on."""

    GUILDS = 1 << 0
    GUILD_MEMBERS = 1 << 1
    GUILD_MESSAGES = 1 << 9
    GUILD_MESSAGE_REACTIONS = 1 << 10
    DIRECT_MESSAGES = 1 << 12
    DIRECT_MESSAGE_REACTIONS = 1 << 13
    MESSAGE_CONTENT = 1 << 15


_ALL_INTENTS = (1 << 26) - 1
_AUTHENTICATED = "Already authenticated."
# Sessions without a socket kept for RESUME; older idle ones are forgotten first.
_MAX_IDLE_SESSIONS = 8


def _without_content(data: JSON) -> JSON:
    """A message as a bot without the MESSAGE_CONTENT intent sees it."""
    return {**data, "content": "", "embeds": [], "attachments": [], "components": []}


class _Socket:
    """One websocket connection, with its zlib stream when the client asked for one."""

    def __init__(self, ws: web.WebSocketResponse, request: web.Request, *, compress: bool) -> None:
        self.ws = ws
        self._request = request
        self._zlib = zlib.compressobj() if compress else None

    async def send(self, payload: JSON) -> None:
        text = json.dumps(payload, separators=(",", ":"))
        if self._zlib is None:
            await self.ws.send_str(text)
            return
        data = self._zlib.compress(text.encode()) + self._zlib.flush(zlib.Z_SYNC_FLUSH)
        await self.ws.send_bytes(data)

    async def close(self, code: CloseCode, reason: str) -> None:
        await self.ws.close(code=int(code), message=reason.encode())

    def kill(self) -> None:
        """Drop the TCP connection without a close frame (what a network failure looks like)."""
        transport = self._request.transport
        if transport is not None:
            transport.abort()


@dataclass(slots=True)
class Session:
    """A gateway session: what it identified with and the dispatches it was sent."""

    id: str
    intents: int
    shard: tuple[int, int]
    seq: int = 0
    backlog: deque[JSON] = field(default_factory=lambda: deque(maxlen=_BACKLOG))
    socket: _Socket | None = None
    resumes: int = 0

    def covers(self, guild_id: int | None) -> bool:
        """Whether events of ``guild_id`` go to this session's shard (DMs go to shard 0)."""
        shard_id, count = self.shard
        return (0 if guild_id is None else (guild_id >> 22) % count) == shard_id


def _valid_shard(raw: object) -> tuple[int, int] | None:
    if raw is None:
        return (0, 1)
    if (
        isinstance(raw, list)
        and len(raw) == 2
        and all(type(n) is int for n in raw)
        and 0 <= raw[0] < raw[1]
    ):
        return (raw[0], raw[1])
    return None


class Gateway:
    """Serves ``/gateway`` websockets and dispatches events to the sessions that want them."""

    def __init__(
        self,
        world: World,
        *,
        heartbeat_interval: float,
        resume_url: Callable[[], str],
        changed: Callable[[], None],
    ) -> None:
        self.world = world
        self.heartbeat_interval = heartbeat_interval
        self._resume_url = resume_url
        self._changed = changed
        self.sessions: dict[str, Session] = {}
        #: Close codes the emulator has sent, oldest first (a marker for tests).
        self.closes: list[int] = []

    # -- serving --------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        """One gateway connection, from HELLO to close (JSON encoding only, as discord.py uses)."""
        if request.query.get("encoding", "json") != "json":
            raise web.HTTPBadRequest(text="the sandbox gateway speaks encoding=json only")
        ws = web.WebSocketResponse(max_msg_size=_MAX_PAYLOAD, autoping=True)
        await ws.prepare(request)
        conn = _Socket(ws, request, compress=request.query.get("compress") == "zlib-stream")
        try:
            await conn.send(
                {"op": Op.HELLO, "d": {"heartbeat_interval": self.heartbeat_interval * 1000}}
            )
            await self._serve(conn)
        except TimeoutError:
            await self._close(conn, CloseCode.SESSION_TIMED_OUT, "Session timed out.")
        except ConnectionResetError:
            _log.debug("discord.gateway.client_gone")
        finally:
            for known in self.sessions.values():
                if known.socket is conn:
                    known.socket = None
            if not ws.closed:
                await ws.close()
            self._changed()
        return ws

    async def _serve(self, conn: _Socket) -> Session | None:
        """Answer the client's payloads; raises ``TimeoutError`` when a heartbeat is missed."""
        loop = asyncio.get_running_loop()
        session: Session | None = None
        # Discord allows some slack past the interval before it gives up on a client.
        allowance = self.heartbeat_interval * 1.5
        deadline = loop.time() + allowance
        while True:
            msg = await conn.ws.receive(timeout=max(deadline - loop.time(), 0.0))
            if msg.type is WSMsgType.ERROR or msg.type in {
                WSMsgType.CLOSE,
                WSMsgType.CLOSING,
                WSMsgType.CLOSED,
            }:
                return session
            payload = _decode(msg.type, msg.data)
            if payload is None:
                await self._close(conn, CloseCode.DECODE_ERROR, "Error while decoding payload.")
                return session
            op, data = payload.get("op"), payload.get("d")
            if op == Op.HEARTBEAT:
                deadline = loop.time() + allowance
                await conn.send({"op": Op.HEARTBEAT_ACK})
            elif op == Op.IDENTIFY:
                if session is not None:
                    await self._close(
                        conn, CloseCode.ALREADY_AUTHENTICATED, "Already authenticated."
                    )
                    return session
                session = await self._identify(conn, data)
                if session is None:
                    return None
            elif op == Op.RESUME:
                if session is not None:
                    await self._close(
                        conn, CloseCode.ALREADY_AUTHENTICATED, "Already authenticated."
                    )
                    return session
                session = await self._resume(conn, data)
            elif session is None:
                await self._close(conn, CloseCode.NOT_AUTHENTICATED, "Not authenticated.")
                return None
            elif op == Op.REQUEST_GUILD_MEMBERS:
                await self._members_chunk(session, data)
            elif op not in {Op.PRESENCE_UPDATE, Op.VOICE_STATE_UPDATE}:
                await self._close(conn, CloseCode.UNKNOWN_OPCODE, "Unknown opcode.")
                return session

    async def _close(self, conn: _Socket, code: CloseCode, reason: str) -> None:
        self.closes.append(int(code))
        await conn.close(code, reason)

    async def _identify(self, conn: _Socket, data: object) -> Session | None:
        if not isinstance(data, dict) or data.get("token") != self.world.token:
            await self._close(conn, CloseCode.AUTHENTICATION_FAILED, "Authentication failed.")
            return None
        intents = data.get("intents")
        if type(intents) is not int or not 0 <= intents <= _ALL_INTENTS:
            await self._close(conn, CloseCode.INVALID_INTENTS, "Invalid intent(s).")
            return None
        if intents & ~self.world.privileged_intents & _PRIVILEGED:
            await self._close(conn, CloseCode.DISALLOWED_INTENTS, "Disallowed intent(s).")
            return None
        shard = _valid_shard(data.get("shard"))
        if shard is None:
            await self._close(conn, CloseCode.INVALID_SHARD, "Invalid shard.")
            return None
        session = Session(secrets.token_hex(16), intents, shard)
        self._forget_idle()
        self.sessions[session.id] = session
        guilds = [g for g in self.world.guilds.values() if session.covers(g.id)]
        self._record(
            session,
            "READY",
            {
                "v": 10,
                "user": self.world.bot.to_json(),
                "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
                "session_id": session.id,
                "session_type": "normal",
                "resume_gateway_url": self._resume_url(),
                "shard": list(shard),
                "application": {"id": str(self.world.application_id), "flags": 0},
                "private_channels": [],
                "relationships": [],
                "presences": [],
                "geo_ordered_rtc_regions": [],
                "auth": {},
                "_trace": ["actorscope-sandbox"],
            },
        )
        for guild in guilds:
            self._record(session, "GUILD_CREATE", guild.to_json())
        await self._flush(session, conn, after=0)
        return session

    def _forget_idle(self) -> None:
        idle = [s.id for s in self.sessions.values() if s.socket is None]
        for session_id in idle[: max(len(idle) - _MAX_IDLE_SESSIONS + 1, 0)]:
            del self.sessions[session_id]

    async def _resume(self, conn: _Socket, data: object) -> Session | None:
        session = None
        if isinstance(data, dict) and data.get("token") == self.world.token:
            session = self.sessions.get(str(data.get("session_id")))
        seq = data.get("seq") if isinstance(data, dict) else None
        oldest = session.backlog[0]["s"] if session is not None and session.backlog else 1
        if session is None or type(seq) is not int or seq < oldest - 1 or seq > session.seq:
            await conn.send({"op": Op.INVALID_SESSION, "d": False})
            return None
        if session.socket is not None:
            await session.socket.close(CloseCode.UNKNOWN_ERROR, "Session resumed elsewhere.")
        session.resumes += 1
        await self._flush(session, conn, after=seq)
        await conn.send({"op": Op.DISPATCH, "t": "RESUMED", "s": session.seq, "d": {}})
        return session

    async def _flush(self, session: Session, conn: _Socket, *, after: int) -> None:
        """Send the backlog after ``after``, then attach ``conn`` for live dispatches."""
        sent = after
        while True:
            pending = [event for event in session.backlog if event["s"] > sent]
            if not pending:
                break
            for event in pending:
                await conn.send(event)
                sent = event["s"]
        session.socket = conn
        self._changed()

    async def _members_chunk(self, session: Session, data: object) -> None:
        if not isinstance(data, dict):
            return
        guild = self.world.guilds.get(int(str(data.get("guild_id", "0")) or 0))
        if guild is None:
            return
        members = list(guild.members.values())
        not_found: list[str] = []
        user_ids = data.get("user_ids")
        if user_ids is not None:
            wanted = [str(u) for u in (user_ids if isinstance(user_ids, list) else [user_ids])]
            members = [m for m in members if str(m.user.id) in wanted]
            not_found = [u for u in wanted if u not in {str(m.user.id) for m in members}]
        else:
            query = str(data.get("query", "")).lower()
            members = [m for m in members if m.user.username.lower().startswith(query)]
            limit = data.get("limit")
            if type(limit) is int and limit > 0:
                members = members[:limit]
        chunk: JSON = {
            "guild_id": str(guild.id),
            "members": [m.to_json() for m in members],
            "chunk_index": 0,
            "chunk_count": 1,
            "not_found": not_found,
        }
        if "nonce" in data:
            chunk["nonce"] = data["nonce"]
        await self._send(session, self._record(session, "GUILD_MEMBERS_CHUNK", chunk))

    # -- dispatching ----------------------------------------------------------------------

    def _record(self, session: Session, event: str, data: JSON) -> JSON:
        session.seq += 1
        payload: JSON = {"op": Op.DISPATCH, "t": event, "s": session.seq, "d": data}
        session.backlog.append(payload)
        return payload

    async def _send(self, session: Session, payload: JSON) -> None:
        socket = session.socket
        if socket is None:
            return  # kept in the backlog for RESUME
        try:
            await socket.send(payload)
        except ConnectionResetError:
            session.socket = None

    async def dispatch(
        self,
        event: str,
        data: JSON,
        *,
        guild_id: int | None,
        intent: Intent,
        content_of: Iterable[int] = (),
    ) -> None:
        """Send ``event`` to every session of the right shard whose intents include ``intent``.

        ``content_of`` names the users whose sessions see content without ``MESSAGE_CONTENT``
        (the author and mentioned users: Discord shows a bot its own and its mentions).
        """
        exempt = set(content_of)
        for session in list(self.sessions.values()):
            if not ((not intent or session.intents & intent) and session.covers(guild_id)):
                continue
            body = data
            if (
                "content" in data
                and guild_id is not None
                and not session.intents & Intent.MESSAGE_CONTENT
                and self.world.bot.id not in exempt
            ):
                body = _without_content(data)
            await self._send(session, self._record(session, event, body))

    def drop_connections(self) -> None:
        """Kill every socket without a close frame (sessions stay resumable)."""
        for session in self.sessions.values():
            socket, session.socket = session.socket, None
            if socket is not None:
                socket.kill()
        self._changed()

    async def invalidate_sessions(self) -> None:
        """Send INVALID_SESSION (not resumable) to every connected session and forget them."""
        for session in list(self.sessions.values()):
            if session.socket is not None:
                await session.socket.send({"op": Op.INVALID_SESSION, "d": False})
        self.sessions.clear()
        self._changed()

    async def close_all(self) -> None:
        """Close every socket with 1001 (the server is going away)."""
        for session in self.sessions.values():
            socket, session.socket = session.socket, None
            if socket is not None:
                await socket.ws.close(code=1001, message=b"sandbox stopping")


_PRIVILEGED = Intent.GUILD_MEMBERS | (1 << 8) | Intent.MESSAGE_CONTENT


def _decode(kind: WSMsgType, raw: object) -> JSON | None:
    if kind is not WSMsgType.TEXT or not isinstance(raw, str):
        return None
    try:
        payload = json.loads(raw)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None
