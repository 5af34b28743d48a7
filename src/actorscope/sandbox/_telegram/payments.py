"""What payments the emulator keeps: the invoices the bot sent and each user's checkout.

The methods and the checkout's steps are in :mod:`.methods_payments`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from actorscope.sandbox._telegram.models import User

__all__ = ["Checkout", "Invoice", "PaymentBook"]

JSON = dict[str, Any]


@dataclass(slots=True)
class Invoice:
    """What a ``sendInvoice`` asked for."""

    chat_id: int
    message_id: int
    payload: str
    currency: str
    prices: list[JSON]
    needs: frozenset[str]
    is_flexible: bool

    @property
    def total(self) -> int:
        """The sum of the prices, in the currency's smallest units."""
        return sum(int(price["amount"]) for price in self.prices)


@dataclass(slots=True)
class Checkout:
    """One user's payment of one invoice, from the first query to its outcome."""

    query_id: str
    invoice: Invoice
    payer: User
    order_info: JSON
    #: The shipping option the user picks (``None``: the first one the bot offers).
    wanted_option: str | None
    created: int
    #: ``shipping``, ``pre_checkout``, ``paid`` or ``failed``.
    stage: str = "shipping"
    shipping_option_id: str | None = None
    total: int = 0
    #: The bot's ``error_message`` when it refused, or why the checkout could not go on.
    error: str | None = None
    charge_ids: tuple[str, str] = ("", "")


class PaymentBook:
    """The invoices the bot sent and every checkout, by query id."""

    def __init__(self) -> None:
        self.invoices: dict[tuple[int, int], Invoice] = {}
        self.checkouts: dict[str, Checkout] = {}
        self._ids = itertools.count(6_000_000_000_000_001)

    def new_id(self) -> str:
        """A fresh query or charge id."""
        return str(next(self._ids))
