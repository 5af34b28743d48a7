"""The one vocabulary of permission reasons: checks, writer requests and link requests."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Reason"]


class Reason(StrEnum):
    """Why a permission outcome is what it is: a check's :class:`Decision`, a writer
    request's :class:`WriterDecision`, a link request's :class:`LinkOutcome`. One vocabulary;
    the values are the contract of docs/design.md (chat answers, audit rows, the API).

    A check's reasons come first, in the decision order.
    """

    NOT_GROUP_CONTEXT = "not_group_context"
    ROLE_BYPASS = "role_bypass"
    NO_AGENT = "no_agent"
    EMPTY_SENDER = "empty_sender"
    SYNTHETIC_SENDER = "synthetic_sender"
    PLACEHOLDER_SENDER = "placeholder_sender"
    GRANTED = "granted"
    DENIED_BY_GRANT = "denied_by_grant"
    NO_GRANT = "no_grant"
    STORE_ERROR_FAIL_OPEN = "store_error_fail_open"
    STORE_ERROR_FAIL_CLOSED = "store_error_fail_closed"
    #: A sender or scope no store can hold (a lone surrogate, NUL, a control character), or
    #: in a group a sender that is not a well-formed person id for its channel (``"042"`` on
    #: Telegram). Denied before any lookup, so it can never reach the fail-open path.
    INVALID_IDENTITY = "invalid_identity"

    # What a request to add or remove a writer came to (WriterManager).
    WRITER_ADDED = "writer_added"
    WRITER_REMOVED = "writer_removed"
    ALREADY_WRITER = "already_writer"
    NOT_A_WRITER = "not_a_writer"
    LAST_WRITER = "last_writer"
    MANAGER_NOT_A_PERSON = "manager_not_a_person"
    INVALID_TARGET = "invalid_target"
    NOT_AUTHORIZED = "not_authorized"

    # What a link request came to (LinkStore; chat answers and audit rows).
    CODE_ISSUED = "code_issued"
    LINKED = "linked"
    UNLINKED = "unlinked"
    NOT_A_PERSON = "not_a_person"
    GROUP_CONTEXT = "group_context"
    NO_CODE = "no_code"
    UNKNOWN_CODE = "unknown_code"
    EXPIRED_CODE = "expired_code"
    USED_CODE = "used_code"
    SAME_ACCOUNT = "same_account"
    ALREADY_LINKED = "already_linked"
    LINKED_ELSEWHERE = "linked_elsewhere"
    RATE_LIMITED = "rate_limited"
    NOT_LINKED = "not_linked"
    #: A live code shown in a group's plain text: burnt (an audit row, no answer).
    EXPOSED_IN_GROUP = "exposed_in_group"
