"""owns(): the actor owns new rows, the scope owns legacy rows; nothing else does."""

from __future__ import annotations

import pytest

from actorscope.identity import Identity, PeerKind
from actorscope.tools._ownership import owner_for_new_row, owns

GROUP = "group:telegram:-100200"
ALICE_IN_GROUP = Identity(user_id=GROUP, sender_id="42", peer_kind=PeerKind.GROUP)


@pytest.mark.parametrize(
    ("owner_id", "identity", "expected"),
    [
        ("42", ALICE_IN_GROUP, True),  # new row: written with the actor
        (GROUP, ALICE_IN_GROUP, True),  # legacy row: written with the scope
        ("42|alice", ALICE_IN_GROUP, True),  # legacy "id|name" owner
        ("43", ALICE_IN_GROUP, False),  # another member's row
        ("group:telegram:-999", ALICE_IN_GROUP, False),  # another group's legacy row
        ("", ALICE_IN_GROUP, False),
        ("", Identity(user_id="", sender_id=""), False),
        ("42", Identity(user_id="42", sender_id="42"), True),  # direct chat
        ("api-user", Identity(user_id="api-user", sender_id=""), True),  # HTTP: actor = user
        ("42", Identity(user_id=GROUP, sender_id="42|alice"), True),
    ],
)
def test_owns(owner_id: str, identity: Identity, expected: bool) -> None:
    """owns() accepts the actor or the scope and refuses everyone else and empty owners."""
    assert owns(owner_id, identity) is expected


def test_new_rows_are_written_with_the_actor() -> None:
    """A new row's owner is the actor, never the group scope."""
    assert owner_for_new_row(ALICE_IN_GROUP) == "42"
    assert owner_for_new_row(Identity(user_id=GROUP, sender_id="42|alice")) == "42"
    assert owner_for_new_row(Identity(user_id="api-user", sender_id="")) == "api-user"


@pytest.mark.parametrize("sender", ["", "subagent:t", "777000", "042", "42\u200b", "\uff14\uff12"])
def test_a_non_person_in_a_group_owns_nothing(sender: str) -> None:
    """A group sender that is empty, synthetic, a placeholder or a look-alike owns no row."""
    who = Identity(user_id=GROUP, sender_id=sender, channel="telegram", peer_kind=PeerKind.GROUP)
    assert not owns(GROUP, who)
    assert not owns(sender or GROUP, who)
    assert owner_for_new_row(who) == ""


def test_a_direct_scope_keeps_its_owner() -> None:
    """Outside groups the person rule does not apply: an HTTP user owns and writes its rows."""
    http_user = Identity(user_id="042", sender_id="", channel="http")
    assert owns("042", http_user)
    assert owner_for_new_row(http_user) == "042"
