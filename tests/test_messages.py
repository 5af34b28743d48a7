"""InboundMessage, OutboundMessage and RunRequest: frozen, read-only metadata, JSON round trip."""

from __future__ import annotations

from typing import Any, get_type_hints

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.messages import InboundMessage, OutboundMessage, RunRequest
from actorscope.propagation import Origin

INBOUND = InboundMessage(
    channel="telegram",
    sender_id="4242",
    chat_id="-100",
    content="hello",
    peer_kind=PeerKind.GROUP,
    user_id="group:telegram:-100",
    sender_kind=SenderKind.USER,
    metadata={"origin_sender_id": "1", "k": "v"},
    thread_id="7",
    message_id="99",
    tenant_id="tenant-uuid",
    agent_id="agent-uuid",
    media=({"kind": "photo", "file_id": "f1", "mime_type": "image/jpeg"},),
)
OUTBOUND = OutboundMessage(
    channel="discord",
    chat_id="81234567890123457",
    content="reply",
    thread_id="81234567890123999",
    reply_to_message_id="5",
    metadata={"k": "v"},
)
RUN = RunRequest(
    session_key="agent:main:telegram:group:-100:topic:7",
    user_id="group:telegram:-100",
    sender_id="4242",
    role="admin",
    channel="telegram",
    chat_id="-100",
    peer_kind=PeerKind.GROUP,
    content="hi",
    metadata={"origin_trace_id": "t"},
    tenant_id="tenant-uuid",
    agent_id="agent-uuid",
    sender_kind=SenderKind.USER,
    thread_id="7",
    message_id="99",
)
MESSAGES: list[BaseModel] = [INBOUND, OUTBOUND, RUN]
IDS = ["inbound", "outbound", "run"]

_REQUIRED: dict[type[BaseModel], dict[str, Any]] = {
    InboundMessage: {"channel": "t", "sender_id": "1", "chat_id": "2", "user_id": "1"},
    OutboundMessage: {"channel": "t", "chat_id": "2", "content": "x"},
    RunRequest: {
        "session_key": "agent:main:t:direct:1",
        "user_id": "1",
        "sender_id": "1",
        "channel": "t",
        "chat_id": "1",
    },
}
MODELS = list(_REQUIRED)
MODEL_IDS = [model.__name__ for model in MODELS]


@pytest.mark.parametrize("message", MESSAGES, ids=IDS)
def test_json_round_trip_gives_an_equal_message(message: BaseModel) -> None:
    """model_validate_json(model_dump_json()) returns an equal message with equal hash."""
    again = type(message).model_validate_json(message.model_dump_json())
    assert again == message
    assert hash(again) == hash(message)
    assert again.model_dump() == message.model_dump()


@pytest.mark.parametrize("message", MESSAGES, ids=IDS)
def test_messages_are_frozen(message: BaseModel) -> None:
    """Assigning to a field of a message raises ValidationError."""
    with pytest.raises(ValidationError, match="frozen"):
        message.chat_id = "other"  # type: ignore[attr-defined]


@pytest.mark.parametrize("message", MESSAGES, ids=IDS)
def test_metadata_is_read_only(message: BaseModel) -> None:
    """Item assignment or deletion on message metadata raises TypeError."""
    metadata: Any = message.metadata  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        metadata["k"] = "changed"
    with pytest.raises(TypeError):
        del metadata["k"]


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_metadata_is_a_copy_of_the_input(model: type[BaseModel]) -> None:
    """Mutating the dict passed as metadata afterwards does not change the message."""
    source = {"k": "v"}
    message: Any = model(**_REQUIRED[model], metadata=source)
    source["k"] = "changed"
    source["new"] = "x"
    assert dict(message.metadata) == {"k": "v"}


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_metadata_defaults_to_an_empty_read_only_mapping(model: type[BaseModel]) -> None:
    """Without metadata a message has an empty, read-only mapping."""
    message: Any = model(**_REQUIRED[model])
    assert dict(message.metadata) == {}
    with pytest.raises(TypeError):
        message.metadata["k"] = "v"


@pytest.mark.parametrize(
    "metadata",
    [{"k": 1}, {1: "v"}, {"k": None}, {"k": ["v"]}, {"k": 1.5}, [("k", "v")], "k=v"],
)
@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_metadata_accepts_only_str_to_str(model: type[BaseModel], metadata: Any) -> None:
    """Metadata that is not a str -> str mapping is rejected with ValidationError."""
    with pytest.raises(ValidationError):
        model(**_REQUIRED[model], metadata=metadata)


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_extra_fields_are_forbidden(model: type[BaseModel]) -> None:
    """An unknown field is rejected with ValidationError."""
    with pytest.raises(ValidationError, match="bogus"):
        model(**_REQUIRED[model], bogus="x")


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_extra_fields_are_forbidden_in_json(model: type[BaseModel]) -> None:
    """An unknown key in JSON input is rejected with ValidationError."""
    payload = model(**_REQUIRED[model]).model_dump(mode="json") | {"bogus": "x"}
    with pytest.raises(ValidationError, match="bogus"):
        model.model_validate(payload)


def _identity_of_both(role: str) -> Identity:
    """The identity INBOUND and RUN both describe (they share scope, sender, place and ids)."""
    return Identity(
        user_id="group:telegram:-100",
        sender_id="4242",
        channel="telegram",
        chat_id="-100",
        peer_kind=PeerKind.GROUP,
        sender_kind=SenderKind.USER,
        role=role,
        tenant_id="tenant-uuid",
        agent_id="agent-uuid",
    )


def test_inbound_identity_maps_every_field() -> None:
    """InboundMessage.identity() copies scope, sender, place, kinds and ids, with the given role."""
    assert INBOUND.identity(role="owner") == _identity_of_both("owner")
    assert INBOUND.identity().role == ""


def test_inbound_identity_ignores_origin_metadata() -> None:
    """InboundMessage.identity() is the message's own sender; origin metadata is not consulted."""
    message = InboundMessage(
        channel="telegram",
        sender_id="subagent:task-1",
        chat_id="-100",
        user_id="group:telegram:-100",
        sender_kind=SenderKind.SYNTHETIC,
        metadata={"origin_sender_id": "4242"},
    )
    identity = message.identity()
    assert identity.sender_id == "subagent:task-1"
    assert identity.sender_kind is SenderKind.SYNTHETIC


def test_run_request_identity_maps_every_field() -> None:
    """RunRequest.identity() copies scope, sender, role, place, kinds and ids."""
    assert RUN.identity() == _identity_of_both("admin")


def test_run_request_identity_of_an_http_style_request() -> None:
    """A RunRequest with an empty sender yields an identity whose actor is the scope."""
    request = RunRequest(
        session_key="agent:main:http:direct:1",
        user_id="api-user",
        sender_id="",
        channel="http",
        chat_id="",
        sender_kind=SenderKind.NONE,
    )
    identity = request.identity()
    assert identity.actor_id == "api-user"
    assert identity.peer_kind is PeerKind.DIRECT
    assert identity.tenant_id is None


def test_enum_fields_parse_from_strings() -> None:
    """peer_kind and sender_kind given as strings become the enums."""
    message = InboundMessage(
        channel="discord",
        sender_id="",
        chat_id="1",
        user_id="guild:1:webhook:2",
        peer_kind="group",
        sender_kind="webhook",
    )
    assert message.peer_kind is PeerKind.GROUP
    assert message.sender_kind is SenderKind.WEBHOOK


text = st.text(max_size=40)
metadata = st.dictionaries(text, text, max_size=5)
optional_text = st.one_of(st.none(), text)


@settings(max_examples=50, deadline=None)
@given(
    inbound=st.builds(
        InboundMessage,
        channel=text,
        sender_id=text,
        chat_id=text,
        content=text,
        peer_kind=st.sampled_from(PeerKind),
        user_id=text,
        sender_kind=st.sampled_from(SenderKind),
        metadata=metadata,
        thread_id=text,
        message_id=text,
        tenant_id=optional_text,
        agent_id=optional_text,
        media=st.lists(st.fixed_dictionaries({"kind": text, "url": text}), max_size=2).map(tuple),
    ),
    outbound=st.builds(
        OutboundMessage,
        channel=text,
        chat_id=text,
        content=text,
        thread_id=text,
        reply_to_message_id=text,
        metadata=metadata,
    ),
    run=st.builds(
        RunRequest,
        session_key=text,
        user_id=text,
        sender_id=text,
        role=text,
        channel=text,
        chat_id=text,
        peer_kind=st.sampled_from(PeerKind),
        content=text,
        metadata=metadata,
        tenant_id=optional_text,
        agent_id=optional_text,
        sender_kind=st.sampled_from(SenderKind),
        thread_id=text,
        message_id=text,
    ),
)
def test_json_round_trip_property(
    inbound: InboundMessage, outbound: OutboundMessage, run: RunRequest
) -> None:
    """Any message with arbitrary text fields and metadata survives a JSON round trip unchanged."""
    for message in (inbound, outbound, run):
        again = type(message).model_validate_json(message.model_dump_json())
        assert again == message
        assert dict(again.metadata) == dict(message.metadata)


def _declaring(name: str) -> set[type]:
    """The classes of both message models' bases whose own body annotates ``name``."""
    bases = {*InboundMessage.__mro__, *RunRequest.__mro__}
    return {cls for cls in bases if name in vars(cls).get("__annotations__", {})}


def test_shared_fields_are_declared_once() -> None:
    """Every field InboundMessage and RunRequest share comes from one class body, alike on both."""
    shared = InboundMessage.model_fields.keys() & RunRequest.model_fields.keys()
    assert {"user_id", "sender_id", "channel", "chat_id", "peer_kind", "sender_kind"} <= shared
    assert {"tenant_id", "agent_id", "thread_id", "message_id", "content", "metadata"} <= shared
    for name in shared:
        declaring = _declaring(name)
        assert len(declaring) == 1, f"{name} is declared in {sorted(c.__name__ for c in declaring)}"
        (owner,) = declaring
        assert issubclass(InboundMessage, owner)
        assert issubclass(RunRequest, owner)
        inbound, run = InboundMessage.model_fields[name], RunRequest.model_fields[name]
        assert inbound.annotation == run.annotation, name
        assert inbound.get_default() == run.get_default(), name
        assert inbound.is_required() is run.is_required(), name


def test_field_order_is_the_inbound_message_order() -> None:
    """Serialised fields keep InboundMessage's order; RunRequest's own follow the shared ones."""
    assert list(InboundMessage.model_fields) == [
        "channel",
        "sender_id",
        "chat_id",
        "content",
        "peer_kind",
        "user_id",
        "sender_kind",
        "metadata",
        "thread_id",
        "message_id",
        "tenant_id",
        "agent_id",
        "media",
    ]
    assert list(RunRequest.model_fields) == [
        *list(InboundMessage.model_fields)[:-1],
        "session_key",
        "role",
    ]
    assert list(RUN.model_dump()) == list(RunRequest.model_fields)


@pytest.mark.parametrize(
    ("holder", "own"),
    [(Identity, {"role"}), (Origin, {"role", "session_key", "trace_id"})],
    ids=["Identity", "Origin"],
)
def test_shared_names_mean_the_same_elsewhere(holder: type, own: set[str]) -> None:
    """Identity's and Origin's fields are the messages' (same type) but for their own few."""
    hints = get_type_hints(holder)
    assert hints.keys() - InboundMessage.model_fields.keys() == own
    for name in hints.keys() - own:
        assert hints[name] == InboundMessage.model_fields[name].annotation, name
