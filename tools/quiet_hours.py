"""The quiet-hours tool: a member's own hours (on their clock) in which reminders wait until the hours end."""

from __future__ import annotations

from datetime import time

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools.context import ToolContext
from tools.storage import reminders as stored


class SetQuietHoursArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: time | None = Field(None, description="HH:MM on the member's clock, e.g. 22:00; null with end clears")
    end: time | None = Field(None, description="HH:MM, e.g. 07:00")

    @field_validator("start", "end")
    @classmethod
    def _wall_clock_minute(cls, value: time | None) -> time | None:
        if value is not None and value.tzinfo is not None:
            raise ValueError("give HH:MM on the member's own clock, without a UTC offset")
        return None if value is None else value.replace(second=0, microsecond=0)

    @model_validator(mode="after")
    def _both_or_neither(self) -> SetQuietHoursArgs:
        if (self.start is None) != (self.end is None):
            raise ValueError("give both start and end, or neither to clear the quiet hours")
        if self.start is not None and self.start == self.end:
            raise ValueError("start and end must differ")
        return self


class QuietHours(BaseModel):
    start: str | None
    end: str | None
    previous: dict[str, str | None] = Field({}, description="the quiet hours before this change, for undo")


async def set_quiet_hours(ctx: ToolContext, args: SetQuietHoursArgs) -> QuietHours:
    """Set the member's own quiet hours (e.g. 22:00 to 07:00 on their clock): reminders that fall inside them are
    delivered when they end. Both null clears them."""
    before = await stored.quiet_hours(ctx.conn, ctx.household_id, ctx.user_id)
    await stored.set_quiet_hours(ctx.conn, ctx.household_id, ctx.user_id, args.start, args.end)
    return QuietHours(
        start=_clock(args.start), end=_clock(args.end), previous={"start": _clock(before[0]), "end": _clock(before[1])}
    )


def _clock(value: time | None) -> str | None:
    return None if value is None else value.strftime("%H:%M")
