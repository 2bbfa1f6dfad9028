"""Group commit: the items submitted while a write is under way share the next write."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class GroupCommit(Generic[Item, Result]):
    """Writes items in batches through `write(items) -> results` (one result per item, in order).

    A quiet process writes each item at once (a batch of one, no added wait); under a burst the batches grow
    instead of the writes queueing one behind another, so 200 items at once cost a handful of writes, not 200.
    With `split_on_error` a failed batch is retried item by item, so one item the store refuses fails alone;
    without it (a store that is down for all) every item of the batch gets the error.
    """

    def __init__(
        self,
        write: Callable[[list[Item]], Awaitable[Sequence[Result]]],
        *,
        max_batch: int = 500,
        split_on_error: bool = False,
    ) -> None:
        self._write_batch = write
        self._max_batch = max_batch
        self._split_on_error = split_on_error
        self._waiting: list[tuple[Item, asyncio.Future[Result]]] = []
        self._drain: asyncio.Task[None] | None = None

    async def submit(self, item: Item) -> Result:
        """Write `item` (with whatever else is waiting) and return its result, or raise the write's error."""
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, future))
        if self._drain is None:
            self._drain = asyncio.create_task(self._write_waiting())
        return await future

    async def _write_waiting(self) -> None:
        try:
            while self._waiting:
                batch, self._waiting = self._waiting[: self._max_batch], self._waiting[self._max_batch :]
                await self._write(batch)
        finally:
            self._drain = None

    async def _write(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            results = await self._write_batch([item for item, _ in batch])
        except Exception as exc:  # handed to each waiting caller, who acts on it
            if self._split_on_error and len(batch) > 1:
                for one in batch:
                    await self._write([one])
                return
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)
