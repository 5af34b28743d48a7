"""The soak's bot: one permission check per turn, answered with what was decided.

Every reply is one line the soak parses: ``soak n=<nonce> id=<message id> s=<scope>
a=<sender> r=<reason> w=<worker pid> t=<decided at> L=<listening>`` (and ``S=ok|error`` for a
probe: whether a plain read of the store answers). ``/ask`` is answered with a button to click.
"""

from __future__ import annotations

import os
import re
import time

from actorscope.bots import BotServices
from actorscope.errors import StoreError
from actorscope.messages import Button, RichReply, RunRequest

_NONCE = re.compile(r"~(\d+)")
_ASK = (Button(text="again", data="again"),)


async def handle(request: RunRequest) -> RichReply:
    """Check the sender's file_writer permission here and say what it was."""
    services = BotServices.current()
    decision = await services.policy.check_file_writer()
    decided = time.time()
    found = _NONCE.search(request.content)
    fields = [
        f"n={found.group(1) if found else '-'}",
        f"id={request.message_id}",
        f"s={request.user_id}",
        f"a={request.sender_id or '-'}",
        f"r={decision.reason}",
        f"w={os.getpid()}",
        f"t={decided:.6f}",
        f"L={int(services.db.listening)}",
    ]
    if "probe" in request.content:
        try:
            await services.db.fetchone("SELECT 1")
            fields.append("S=ok")
        except StoreError:
            fields.append("S=error")
    ask = request.content.startswith("/ask") or request.metadata.get("command") == "ask"
    return RichReply(text="soak " + " ".join(fields), buttons=(_ASK,) if ask else ())
