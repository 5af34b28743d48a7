"""The Telegram world the tests share: the @devs forum with topic "ideas", alice and bob.

Build it on an emulator a test configured (token, poll timeout) and add what that test needs
beside it (another chat, more people)::

    emu = devs_forum(BotApiEmulator(max_poll_timeout=2.0))
"""

from __future__ import annotations

from actorscope.sandbox import BotApiEmulator
from actorscope.sandbox._telegram import ChatType as TelegramChatType
from actorscope.sandbox._telegram import MemberStatus as TelegramMemberStatus


def devs_forum(emu: BotApiEmulator) -> BotApiEmulator:
    """Add alice (admin) and bob (member) of the @devs forum, its topic "ideas"; return ``emu``.

    alice and bob are the emulator's first two users, in that order; alice is an admin before
    the topic opens, so she (not the bot) created it and a message in it replies to her.
    """
    alice = emu.state.add_user("Alice", username="alice")
    bob = emu.state.add_user("Bob", username="bob")
    devs = emu.state.add_chat(
        TelegramChatType.SUPERGROUP, title="Devs", username="devs", is_forum=True
    )
    emu.state.set_member(devs, alice, TelegramMemberStatus.ADMINISTRATOR)
    emu.state.set_member(devs, bob, TelegramMemberStatus.MEMBER)
    emu.state.add_topic(devs, "ideas")  # thread 2: the first message of @devs opens it
    return emu
