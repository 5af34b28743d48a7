"""HTTP API and operator console (extra ``http``: FastAPI + uvicorn).

``create_app(db, handler=...)`` returns a FastAPI app a host can serve or mount::

    async with Database.open("actorscope.db") as db:
        app = create_app(db, handler=handle)
        # proxy_headers=False: uvicorn would believe X-Forwarded-For from 127.0.0.1.
        config = uvicorn.Config(app, host="127.0.0.1", port=8080, proxy_headers=False)
        await uvicorn.Server(config).serve()

``create_app`` also takes an agent's :class:`~actorscope.assembly.Assembly` instead of the
database: the app then serves that agent with the assembly's stores and one run step.
``actorscope serve CONFIG`` runs it next to the configured bots, on one assembly
(``HttpSection.listen()``, then :func:`serve`), with the ``[http]`` section's
bounds (connections, header and body timeouts, trusted proxies). :class:`ApiKeyStore` is what
``actorscope keys`` manages.
"""

from actorscope.http._app import create_app
from actorscope.http._keys import ApiKeyStore
from actorscope.http._serve import serve

__all__ = ["ApiKeyStore", "create_app", "serve"]
