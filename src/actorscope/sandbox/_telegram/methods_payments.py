"""Payments: invoices the bot sends, and a user's checkout that follows the bot's answers.

The emulator plays the Telegram client and a test payment provider. ``sendInvoice`` posts an
invoice message; a user's ``pay`` starts a checkout: a ``shipping_query`` first when the invoice
asks for a shipping address with a flexible price, then a ``pre_checkout_query``, and, once the
bot confirms it, the ``successful_payment`` service message. Each query must be answered once,
within 10 seconds (as on Telegram); a refusal (``ok=False``) ends the checkout with the bot's
``error_message``, which the user would see.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from actorscope.sandbox._telegram.context import MethodContext
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.methods_messages import post, target_chat
from actorscope.sandbox._telegram.models import Chat, User
from actorscope.sandbox._telegram.params import Params
from actorscope.sandbox._telegram.payloads import build_message
from actorscope.sandbox._telegram.payments import Checkout, Invoice

__all__ = [
    "ANSWER_WINDOW",
    "SAMPLE_ADDRESS",
    "answer_pre_checkout_query",
    "answer_shipping_query",
    "send_invoice",
    "start_checkout",
]

JSON = dict[str, Any]
#: Seconds the bot has to answer a shipping or pre-checkout query.
ANSWER_WINDOW = 10
#: Telegram Stars: no provider, one price, no shipping.
STARS = "XTR"
_CURRENCY = re.compile(r"^[A-Z]{3}$")
_NEEDS = ("need_name", "need_phone_number", "need_email", "need_shipping_address")
_QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"
#: The address a user's client fills in when an invoice asks for one.
SAMPLE_ADDRESS: JSON = {
    "country_code": "US",
    "state": "CA",
    "city": "Springfield",
    "street_line1": "742 Evergreen Terrace",
    "street_line2": "",
    "post_code": "90210",
}


def _price_list(value: object, what: str) -> list[JSON]:
    if not isinstance(value, list) or not value:
        raise BotApiError(400, f"Bad Request: {what} must be a non-empty array of LabeledPrice")
    for price in value:
        amount = price.get("amount") if isinstance(price, dict) else None
        if (
            not isinstance(price, dict)
            or not isinstance(price.get("label"), str)
            or isinstance(amount, bool)
            or not isinstance(amount, int)
        ):
            raise BotApiError(400, f"Bad Request: can't parse {what}")
    return [{"label": p["label"], "amount": p["amount"]} for p in value]


def _length(p: Params, name: str, low: int, high: int) -> str:
    value = p.get_str(name) or ""
    if not low <= len(value) <= high:
        raise BotApiError(400, f"Bad Request: {name} must be {low}-{high} characters long")
    return value


async def send_invoice(ctx: MethodContext, p: Params) -> Any:
    """Post an invoice (a ``Message`` with ``invoice``) that users can pay."""
    chat = target_chat(ctx, p)
    title = _length(p, "title", 1, 32)
    description = _length(p, "description", 1, 255)
    payload = p.get_str("payload") or ""
    if not 1 <= len(payload.encode()) <= 128:
        raise BotApiError(400, "Bad Request: payload must be 1-128 bytes long")
    currency = p.get_str("currency") or ""
    if not _CURRENCY.match(currency):
        raise BotApiError(400, "Bad Request: CURRENCY_INVALID")
    prices = _price_list(p.get_array("prices", required=True), "prices")
    provider = p.get_str("provider_token", "") or ""
    needs = frozenset(need for need in _NEEDS if p.get_bool(need))
    flexible = p.get_bool("is_flexible")
    if currency == STARS:
        if provider or len(prices) != 1 or needs or flexible:
            raise BotApiError(
                400, "Bad Request: a Stars invoice has one price, no provider and no shipping"
            )
    elif not provider:
        raise BotApiError(400, "Bad Request: PAYMENT_PROVIDER_INVALID")
    invoice = Invoice(chat.id, 0, payload, currency, prices, needs, flexible)
    if invoice.total <= 0:
        raise BotApiError(400, "Bad Request: TOTAL_AMOUNT_INVALID")
    content = {
        "invoice": {
            "title": title,
            "description": description,
            "start_parameter": p.get_str("start_parameter", "") or "",
            "currency": currency,
            "total_amount": invoice.total,
        }
    }
    message = post(ctx, p, content, chat=chat)
    invoice.message_id = message["message_id"]
    ctx.payments.invoices[(chat.id, invoice.message_id)] = invoice
    return message


def start_checkout(
    ctx: MethodContext,
    payer: User,
    chat: Chat,
    message_id: int,
    *,
    shipping_option: str | None,
    order_info: Mapping[str, Any] | None,
) -> JSON | None:
    """``payer`` presses Pay on an invoice: the first query of the checkout, queued."""
    invoice = ctx.payments.invoices.get((chat.id, message_id))
    if invoice is None:
        raise BotApiError(400, f"Bad Request: message {message_id} is not an invoice of the bot")
    if any(c.invoice is invoice and c.stage == "paid" for c in ctx.payments.checkouts.values()):
        raise BotApiError(400, "Bad Request: the invoice is paid already")
    info = _order_info(payer, invoice.needs) if order_info is None else dict(order_info)
    checkout = Checkout(
        ctx.payments.new_id(), invoice, payer, info, shipping_option, created=ctx.state.now()
    )
    ctx.payments.checkouts[checkout.query_id] = checkout
    if invoice.is_flexible and "need_shipping_address" in invoice.needs:
        return ctx.updates.push(
            "shipping_query",
            {
                "id": checkout.query_id,
                "from": payer.to_json(),
                "invoice_payload": invoice.payload,
                "shipping_address": info.get("shipping_address", SAMPLE_ADDRESS),
            },
        )
    return _pre_checkout(ctx, checkout, invoice.total)


def _order_info(payer: User, needs: frozenset[str]) -> JSON:
    """What the user's client fills in for the fields the invoice asks for."""
    info: JSON = {}
    if "need_name" in needs:
        info["name"] = " ".join(filter(None, (payer.first_name, payer.last_name)))
    if "need_phone_number" in needs:
        info["phone_number"] = f"1555{payer.id % 10**7:07d}"
    if "need_email" in needs:
        info["email"] = f"{payer.username or payer.id}@example.com"
    if "need_shipping_address" in needs:
        info["shipping_address"] = dict(SAMPLE_ADDRESS)
    return info


def _pre_checkout(ctx: MethodContext, checkout: Checkout, total: int) -> JSON | None:
    checkout.stage = "pre_checkout"
    checkout.total = total
    checkout.created = ctx.state.now()
    query: JSON = {
        "id": checkout.query_id,
        "from": checkout.payer.to_json(),
        "currency": checkout.invoice.currency,
        "total_amount": total,
        "invoice_payload": checkout.invoice.payload,
    }
    if checkout.shipping_option_id is not None:
        query["shipping_option_id"] = checkout.shipping_option_id
    if checkout.order_info:
        query["order_info"] = checkout.order_info
    return ctx.updates.push("pre_checkout_query", query)


def _open_checkout(ctx: MethodContext, p: Params, name: str, stage: str) -> Checkout:
    checkout = ctx.payments.checkouts.get(p.require_str(name))
    if checkout is None or checkout.stage != stage:
        raise BotApiError(400, _QUERY_INVALID)
    if ctx.state.now() - checkout.created > ANSWER_WINDOW:
        checkout.stage, checkout.error = "failed", "the bot did not answer in time"
        raise BotApiError(400, _QUERY_INVALID)
    return checkout


def _refusal(p: Params) -> str:
    message = p.get_str("error_message") or ""
    if not message.strip():
        raise BotApiError(400, "Bad Request: error_message is required when ok is false")
    return message


async def answer_shipping_query(ctx: MethodContext, p: Params) -> Any:
    """The bot offers shipping options (the user picks one) or refuses the address."""
    checkout = _open_checkout(ctx, p, "shipping_query_id", "shipping")
    if not p.get_bool("ok"):
        checkout.stage, checkout.error = "failed", _refusal(p)
        return True
    offered = p.get_array("shipping_options", required=True) or []
    options: dict[str, int] = {}
    for option in offered:
        if not isinstance(option, dict) or not isinstance(option.get("id"), str):
            raise BotApiError(400, "Bad Request: can't parse shipping option")
        if not isinstance(option.get("title"), str):
            raise BotApiError(400, "Bad Request: can't parse shipping option")
        prices = _price_list(option.get("prices"), "shipping option prices")
        options[option["id"]] = sum(int(price["amount"]) for price in prices)
    if not options:
        raise BotApiError(400, "Bad Request: SHIPPING_OPTIONS_EMPTY")
    wanted = checkout.wanted_option or next(iter(options))
    if wanted not in options:
        checkout.stage = "failed"
        checkout.error = f"the bot does not offer shipping option {wanted!r}"
        return True
    checkout.shipping_option_id = wanted
    _pre_checkout(ctx, checkout, checkout.invoice.total + options[wanted])
    return True


async def answer_pre_checkout_query(ctx: MethodContext, p: Params) -> Any:
    """The bot confirms the order (the payment goes through) or refuses it."""
    checkout = _open_checkout(ctx, p, "pre_checkout_query_id", "pre_checkout")
    if not p.get_bool("ok"):
        checkout.stage, checkout.error = "failed", _refusal(p)
        return True
    checkout.stage = "paid"
    checkout.charge_ids = (f"tg_{ctx.payments.new_id()}", f"provider_{ctx.payments.new_id()}")
    invoice = checkout.invoice
    payment: JSON = {
        "currency": invoice.currency,
        "total_amount": checkout.total,
        "invoice_payload": invoice.payload,
        "telegram_payment_charge_id": checkout.charge_ids[0],
        "provider_payment_charge_id": checkout.charge_ids[1],
    }
    if checkout.shipping_option_id is not None:
        payment["shipping_option_id"] = checkout.shipping_option_id
    if checkout.order_info:
        payment["order_info"] = checkout.order_info
    chat = ctx.state.chat(invoice.chat_id)
    message = build_message(ctx.state, chat, checkout.payer, extra={"successful_payment": payment})
    ctx.updates.push("message", message)
    return True
