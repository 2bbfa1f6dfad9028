"""Outbox rows as a sender receives them, for the channel senders' tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tools.storage.outbox import OutboxRow


def outbox_row(
    channel: str,
    recipient: str,
    text: str,
    *,
    row_id: int = 1,
    household_id: int = 1,
    inbox_id: int | None = None,
    payload: dict[str, Any] | None = None,
) -> OutboxRow:
    return OutboxRow(
        id=row_id,
        household_id=household_id,
        user_id=3,
        inbox_id=inbox_id,
        channel=channel,
        recipient=recipient,
        text=text,
        payload=payload or {},
        status="pending",
        attempts=0,
        last_error=None,
        created_at=datetime.now(UTC),
        sent_at=None,
    )
