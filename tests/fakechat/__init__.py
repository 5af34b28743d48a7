"""fakechat: a tiny chat platform of string ids, added to actorscope through its contract only.

It is what docs/design.md ("Adding a platform") walks through: a registration
(:data:`SPEC`: opaque ids, threads, where the contract lives), the contract
(:data:`PLATFORM`: normaliser, runner with its writer-command surface, simulator, sandbox),
an emulator (:class:`FakeChat`, its server), a simulator (``_sim.FakeChatSim``) and a sandbox
(``_sandbox.SANDBOX``, for ``actorscope run --sandbox`` and ``actorscope sandbox``). Nothing here
imports a ``_`` module of actorscope. A test registers it for its length::

    with register(SPEC):
        ...

or a distribution declares it, ``fakechat = "tests.fakechat:SPEC"`` in the entry-point group
``actorscope.platforms``. The registry loads that when it is first asked, maybe while
``actorscope.bots`` or the kit is being imported, so this face imports only what a platform's
layer may (``actorscope.channels`` and below): the simulator, built on the kit, is named by
the contract (``tests.fakechat._sim:FakeChatSim``) and imported where it runs.
"""

from tests.fakechat._chat import FakeChat, Post
from tests.fakechat._normalize import NAME, inspect_event
from tests.fakechat._platform import PLATFORM, FakeChatPlatform, FakeChatSection
from tests.fakechat._runner import FakeChatRunner

from actorscope.platforms import IdForm, PlatformSpec

__all__ = [
    "NAME",
    "PLATFORM",
    "SPEC",
    "FakeChat",
    "FakeChatPlatform",
    "FakeChatRunner",
    "FakeChatSection",
    "Post",
    "inspect_event",
]

#: The fake chat's registration: opaque ids, threads, and where its contract lives.
SPEC = PlatformSpec(NAME, IdForm.OPAQUE, "thread", "tests.fakechat:PLATFORM")
