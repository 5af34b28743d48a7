"""What users send besides text: photos, documents, locations, polls, votes, web app data,
payments and Telegram Passport data.

Each helper builds the ``Message`` (or ``PollAnswer``) JSON the Bot API delivers for the same
thing done in a Telegram client, queues it and returns the update (``None`` when the bot does
not receive it). Files a user sends are kept like the bot's own uploads, so ``getFile`` and the
download URL serve them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from actorscope.sandbox._telegram.actions import TopicRef, UserActions
from actorscope.sandbox._telegram.entities import parse_entities, utf16_len
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.files import SAMPLE_PNG, Upload, image_size
from actorscope.sandbox._telegram.methods_messages import MAX_CAPTION_LENGTH, keyboard_buttons
from actorscope.sandbox._telegram.methods_payments import start_checkout
from actorscope.sandbox._telegram.models import Chat, ChatType
from actorscope.sandbox._telegram.passport import passport_data
from actorscope.sandbox._telegram.state import ChatRef, UserRef

__all__ = ["MediaActions"]

JSON = dict[str, Any]
_MAX_POLL_OPTIONS = 12
# Keyboard buttons that do more than send their text, and the action that does it.
_BUTTON_ACTIONS = {
    "request_poll": "user_poll()",
    "request_location": "user_location()",
    "web_app": "web_app_data()",
    "request_contact": "a contact (not emulated)",
    "request_users": "a user share (not emulated)",
    "request_chat": "a chat share (not emulated)",
}


def _caption(caption: str | None) -> JSON:
    if not caption:
        return {}
    if utf16_len(caption) > MAX_CAPTION_LENGTH:
        raise BotApiError(400, "Bad Request: message caption is too long")
    entities = parse_entities(caption)
    return {"caption": caption, "caption_entities": entities} if entities else {"caption": caption}


class MediaActions(UserActions):
    """Users send photos, documents, locations and polls, vote, send web app data, and pay."""

    def user_photo(
        self,
        user: UserRef,
        photo: bytes | None = None,
        chat: ChatRef | None = None,
        *,
        caption: str | None = None,
        topic: TopicRef | None = None,
        reply_to: int | None = None,
    ) -> JSON | None:
        """``user`` sends a photo (PNG or JPEG bytes; default: a small sample picture), with a
        caption (a command in it counts)."""
        photo = SAMPLE_PNG if photo is None else photo
        width, height = image_size(photo)
        if not width or not height:
            raise BotApiError(400, "Bad Request: a photo must be a PNG or JPEG image")
        stored = self.context.files.resolve(Upload("photo.jpg", "image/jpeg", photo), "photos")
        size = {
            "file_id": stored.file_id,
            "file_unique_id": stored.file_unique_id,
            "file_size": len(photo),
            "width": width,
            "height": height,
        }
        content = {"photo": [size], **_caption(caption)}
        return self._user_posts(user, chat, content, topic=topic, reply_to=reply_to)

    def user_document(
        self,
        user: UserRef,
        content: bytes,
        file_name: str,
        chat: ChatRef | None = None,
        *,
        mime_type: str | None = None,
        caption: str | None = None,
        topic: TopicRef | None = None,
        reply_to: int | None = None,
    ) -> JSON | None:
        """``user`` sends the file ``file_name`` with ``content``, with a caption."""
        if not file_name.strip() or "/" in file_name:
            raise BotApiError(400, "Bad Request: a document needs a file name without '/'")
        stored = self.context.files.resolve(Upload(file_name, mime_type, content), "documents")
        document: JSON = {
            "file_name": file_name,
            "file_id": stored.file_id,
            "file_unique_id": stored.file_unique_id,
            "file_size": len(content),
        }
        if mime_type:
            document["mime_type"] = mime_type
        body = {"document": document, **_caption(caption)}
        return self._user_posts(user, chat, body, topic=topic, reply_to=reply_to)

    def user_location(
        self,
        user: UserRef,
        latitude: float,
        longitude: float,
        chat: ChatRef | None = None,
        *,
        topic: TopicRef | None = None,
        reply_to: int | None = None,
    ) -> JSON | None:
        """``user`` shares a location (a point on the map, not a live location)."""
        if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
            raise BotApiError(400, "Bad Request: latitude is -90..90, longitude -180..180")
        location = {"latitude": float(latitude), "longitude": float(longitude)}
        return self._user_posts(user, chat, {"location": location}, topic=topic, reply_to=reply_to)

    def user_poll(
        self,
        user: UserRef,
        question: str,
        options: Sequence[str],
        chat: ChatRef | None = None,
        *,
        correct_option: int | None = None,
        anonymous: bool = True,
        multiple_answers: bool = False,
    ) -> JSON | None:
        """``user`` sends a poll (a quiz when ``correct_option`` is given). In the private chat
        with the bot that is possible only through a ``request_poll`` button of the keyboard the
        bot shows."""
        person = self.state.user(user)
        target = self.state.private_chat(person) if chat is None else self.state.chat(chat)
        kind = "regular" if correct_option is None else "quiz"
        if target.type is ChatType.PRIVATE:
            self._require_poll_button(target, kind)
        if not question.strip() or len(question) > 300:
            raise BotApiError(400, "Bad Request: a poll question is 1-300 characters")
        if not 2 <= len(options) <= _MAX_POLL_OPTIONS:
            raise BotApiError(400, f"Bad Request: a poll has 2-{_MAX_POLL_OPTIONS} options")
        if not all(1 <= len(text.strip()) <= 100 for text in options):
            raise BotApiError(400, "Bad Request: a poll option is 1-100 characters")
        if correct_option is not None and not 0 <= correct_option < len(options):
            raise BotApiError(400, "Bad Request: wrong correct option ID specified")
        poll: JSON = {
            "id": self.context.polls.new_id(),
            "question": question,
            "options": [
                {"persistent_id": str(i), "text": text, "voter_count": 0}
                for i, text in enumerate(options)
            ],
            "total_voter_count": 0,
            "is_closed": False,
            "is_anonymous": anonymous,
            "type": kind,
            "allows_multiple_answers": kind == "regular" and multiple_answers,
            "allows_revoting": kind == "regular",
            "members_only": False,
        }
        if correct_option is not None and target.type is ChatType.PRIVATE:
            # Telegram shows a quiz's answer to the bot in its private chat only.
            poll["correct_option_ids"] = [correct_option]
        target, message = self._user_message(person, target, {"poll": poll})
        self.context.polls.add(message, by_bot=False)
        return self._deliver(target, message)

    def _require_poll_button(self, chat: Chat, kind: str) -> None:
        for button in keyboard_buttons(self.context, chat):
            wanted = button.get("request_poll")
            if isinstance(wanted, dict) and wanted.get("type") in (None, kind):
                return
        raise BotApiError(
            400, f"Bad Request: the bot shows no keyboard button that asks for a {kind} poll"
        )

    def vote(
        self, user: UserRef, chat: ChatRef, message_id: int, options: Sequence[int]
    ) -> JSON | None:
        """``user`` votes for ``options`` (indexes; empty retracts) in the poll of a message.

        The bot hears of votes in its own polls only: a ``poll_answer`` when the poll is not
        anonymous, then the poll's new state (a ``poll`` update). Returns the first of these
        (``None`` when the bot receives neither).
        """
        person = self.state.user(user)
        target = self.state.chat(chat)
        record = self.context.polls.in_message(target.id, message_id)
        if record is None:
            raise BotApiError(400, f"Bad Request: message {message_id} has no poll")
        if target.is_group and not self.state.status(target, person).is_present:
            raise BotApiError(400, f"Bad Request: {person.display_name} is not in {target.label}")
        answer = self.context.polls.vote(record, person, list(options))
        if not record.by_bot:
            return None
        first = None if answer is None else self.queue.push("poll_answer", answer)
        state = self.queue.push("poll", record.snapshot())
        return first or state

    def press_button(self, user: UserRef, text: str, chat: ChatRef | None = None) -> JSON | None:
        """``user`` presses the button ``text`` of the reply keyboard the bot shows in ``chat``
        (default: their private chat): the button's text, sent as their message. Buttons that
        share something else name the action to use instead."""
        person = self.state.user(user)
        target = self.state.private_chat(person) if chat is None else self.state.chat(chat)
        buttons = keyboard_buttons(self.context, target)
        found = next((b for b in buttons if b["text"] == text), None)
        if found is None:
            shown = ", ".join(repr(b["text"]) for b in buttons) or "no keyboard"
            raise BotApiError(400, f"Bad Request: no keyboard button {text!r} (shown: {shown})")
        special = sorted(set(found) & set(_BUTTON_ACTIONS))
        if special:
            action = _BUTTON_ACTIONS[special[0]]
            raise BotApiError(400, f"Bad Request: {text!r} is a {special[0]} button: {action}")
        return self.user_message(person, text, target)

    def web_app_data(self, user: UserRef, button_text: str, data: str) -> JSON | None:
        """A web app opened from the bot's keyboard button ``button_text`` sends ``data``
        (``Telegram.WebApp.sendData``): a service message in the private chat with the bot."""
        person = self.state.user(user)
        chat = self.state.private_chat(person)
        buttons = [b for b in keyboard_buttons(self.context, chat) if "web_app" in b]
        if not any(b["text"] == button_text for b in buttons):
            shown = ", ".join(repr(b["text"]) for b in buttons) or "none"
            raise BotApiError(
                400, f"Bad Request: no web app button {button_text!r} is shown (shown: {shown})"
            )
        if not data or len(data.encode()) > 4096:
            raise BotApiError(400, "Bad Request: web app data is 1-4096 bytes")
        content = {"web_app_data": {"data": data, "button_text": button_text}}
        return self._user_posts(person, chat, content)

    def pay(
        self,
        user: UserRef,
        chat: ChatRef,
        message_id: int,
        *,
        shipping_option: str | None = None,
        order_info: Mapping[str, Any] | None = None,
    ) -> JSON | None:
        """``user`` pays the bot's invoice ``message_id``: the checkout's first query (a
        ``shipping_query`` or a ``pre_checkout_query``). The next steps follow the bot's
        answers; the user picks ``shipping_option`` (default: the first offered) and sends
        ``order_info`` (default: what the invoice asks for, filled in from their profile)."""
        person = self.state.user(user)
        target = self.state.chat(chat)
        return start_checkout(
            self.context,
            person,
            target,
            message_id,
            shipping_option=shipping_option,
            order_info=order_info,
        )

    def share_passport(
        self, user: UserRef, nonce: str, elements: Mapping[str, object]
    ) -> JSON | None:
        """``user`` shares Telegram Passport ``elements`` with the bot, which asked with
        ``nonce``: a ``passport_data`` message in their private chat, encrypted for the bot's
        ``passport_public_key``. ``elements`` maps a type to its value: a string for
        ``phone_number`` and ``email``; the data for ``personal_details`` and ``address``;
        ``{"data": {...}, "front_side": b"...", "selfie": ..., ...}`` for identity documents;
        ``{"files": [b"...", ...]}`` for ``utility_bill`` and the other scanned documents."""
        key = self.context.setup.passport_public_key
        if key is None:
            raise BotApiError(400, "Bad Request: the bot has no passport public key (BotFather)")
        if not 1 <= len(nonce) <= 128:
            raise BotApiError(400, "Bad Request: a passport nonce is 1-128 characters")
        person = self.state.user(user)
        data = passport_data(key, nonce, elements, self.context.files, self.state.now())
        return self._user_posts(person, None, {"passport_data": data})
