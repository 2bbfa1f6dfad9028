"""What every chat channel does with a verified message: who sent it, onboarding, rate limits, then the inbox.

Adapters (Telegram, Threema, email) verify the request and parse it into an `Incoming`; `receive` decides; the
adapter sends `Received.notice` back itself when there is one. Unknown senders get one short notice and nothing
else: no inbox row, no engine job, no LLM call.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
from redis.exceptions import RedisError

from bot.channels import intake, rates
from bot.channels.pseudonyms import pseudonym
from engine.deps import Deps
from tools.storage import households, identities
from tools.storage.households import Principal
from tools.storage.inbox import InboxRow

log = structlog.get_logger()


@dataclass(frozen=True)
class Incoming:
    """A verified message from a chat channel, normalised."""

    channel: str
    sender: str  # who wrote it, as the channel names them: Telegram user id, Threema ID, email address
    message_id: str  # unique per channel: a redelivery carries the same one
    text: str
    reply_to: str  # where the answer goes: the chat, the Threema ID, the address
    trace_id: str
    join_code: str | None = None  # the code of `/start CODE` or `JOIN CODE`, parsed by the adapter
    join_hint: str = "JOIN <code>"  # how this channel's members type a code, for the notice to strangers
    payload: Mapping[str, Any] = field(default_factory=dict)  # channel extras: attachments, threading, chat type


class Verdict(enum.StrEnum):
    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    LINKED = "linked"
    ALREADY_LINKED = "already_linked"
    JOIN_REFUSED = "join_refused"
    UNKNOWN = "unknown"
    RATE_LIMITED = "rate_limited"


@dataclass(frozen=True)
class Received:
    verdict: Verdict
    notice: str | None = None  # a short text the adapter sends back at once; None: say nothing now
    row: InboxRow | None = None
    principal: Principal | None = None


async def receive(deps: Deps, incoming: Incoming) -> Received:
    started = time.monotonic()
    async with deps.db.unscoped() as conn:
        principal = await identities.resolve_identity(conn, incoming.channel, incoming.sender)
    if incoming.join_code is not None:
        received = await _join(deps, incoming, principal)
    elif principal is None:
        received = await _stranger(deps, incoming)
    elif not await _within_rate(deps, incoming):
        notice = await _once_per_window(deps, incoming, "slow", _SLOW_DOWN)
        received = Received(Verdict.RATE_LIMITED, notice, None, principal)
    else:
        row, created = await intake.accept(
            deps,
            principal,
            channel=incoming.channel,
            external_id=incoming.message_id,
            text=incoming.text,
            trace_id=incoming.trace_id,
            payload={**incoming.payload, "reply_to": incoming.reply_to},
        )
        received = Received(Verdict.ACCEPTED if created else Verdict.DUPLICATE, None, row, principal)
    log.info(
        "channel.message.received",
        channel=incoming.channel,
        verdict=received.verdict.value,
        duration_ms=round((time.monotonic() - started) * 1000, 2),
    )
    return received


_SLOW_DOWN = "You are writing faster than I can read — please wait a minute and send that again."
_UNKNOWN = (
    "Hello! I am a private family assistant and I do not know you yet. If your family uses me, ask them for an "
    "invite code and send it here as: {hint}"
)
_REFUSED = "That code did not work: it may be mistyped, already used or expired. Please ask your family for a new one."
_WELCOME = "Welcome, {name}! You are connected now — just write to me here."
_ALREADY = "You are already connected as {name}. Just write to me."


async def _join(deps: Deps, incoming: Incoming, known: Principal | None) -> Received:
    if known is not None:
        name = await _member_name(deps, known)
        return Received(Verdict.ALREADY_LINKED, _ALREADY.format(name=name), None, known)
    # Codes are long enough that guessing is hopeless; the limit also keeps a stranger from using us as an echo.
    limit = deps.settings.channel.join_attempts_per_hour
    if not await _within_rate(deps, incoming, kind="join", limit=limit, window_s=3600):
        return Received(Verdict.RATE_LIMITED, await _once_per_window(deps, incoming, "join", _SLOW_DOWN, window_s=3600))
    async with deps.db.unscoped() as conn:
        principal = await identities.redeem_invite(conn, incoming.join_code or "", incoming.channel, incoming.sender)
    if principal is None:
        log.info("channel.join.refused", channel=incoming.channel)
        return Received(Verdict.JOIN_REFUSED, _REFUSED)
    log.info("channel.join.linked", channel=incoming.channel, household_id=principal.household_id)
    name = await _member_name(deps, principal)
    return Received(Verdict.LINKED, _WELCOME.format(name=name), None, principal)


async def _stranger(deps: Deps, incoming: Incoming) -> Received:
    """One short notice per sender per window, however often they write; otherwise silence."""
    window = deps.settings.channel.unknown_notice_every_s
    notice = await _once_per_window(
        deps, incoming, "unknown", _UNKNOWN.format(hint=incoming.join_hint), window_s=window
    )
    return Received(Verdict.UNKNOWN, notice)


async def _member_name(deps: Deps, principal: Principal) -> str:
    async with deps.db.household(principal.household_id, principal.user_id) as conn:
        return await households.member_name(conn, principal.user_id)


def _key(deps: Deps, incoming: Incoming, kind: str) -> str:
    """The Redis key of one sender's counter or notice flag; the sender appears only as a keyed hash."""
    return f"faa:channel:{kind}:{incoming.channel}:{pseudonym(deps.settings, incoming.channel, incoming.sender)}"


async def _within_rate(
    deps: Deps, incoming: Incoming, *, kind: str = "rate", limit: int | None = None, window_s: int = 60
) -> bool:
    """A fixed-window counter per sender (`bot.channels.rates`)."""
    limit = deps.settings.channel.messages_per_minute if limit is None else limit
    return await rates.wait_s(deps, _key(deps, incoming, kind), limit=limit, window_s=window_s) is None


async def _once_per_window(deps: Deps, incoming: Incoming, kind: str, text: str, *, window_s: int = 60) -> str | None:
    """`text` the first time in the window, `None` after that: a notice is never repeated into a flood."""
    try:
        first = await deps.redis.set(_key(deps, incoming, f"notice:{kind}"), 1, nx=True, ex=window_s)
    except (RedisError, OSError):
        return text
    return text if first else None
