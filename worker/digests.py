"""Digests in the worker: a sweep each minute enqueues the digests that are due; a job sends each one once.

A digest has one part per layer: when it is due and what was sent are rows (`tools.storage.digests`), what it says
is gathered and phrased by the engine (`engine.digests`), and here the worker runs it. Its run row, chart and outbox
rows commit together, so two workers, a retried job or a restart never send a period twice; a lost job is enqueued
again by the next sweep while the digest is still worth it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime

import structlog

from engine.deps import Deps
from engine.digests import Digest, gather, household_language, phrased
from tools.charts import description, render_png
from tools.context import ToolContext
from tools.infra.queue import RUN_DIGEST, digest_job_id, enqueue_urgent
from tools.storage import digests, households, identities, media, outbox
from tools.storage.digests import Occurrence
from tools.storage.households import Member
from worker import delivery

log = structlog.get_logger()


async def enqueue_due(deps: Deps, now: datetime) -> int:
    """Enqueue every digest due now and not yet sent; the job id keeps a waiting job from being doubled."""
    async with deps.db.unscoped() as conn:
        due = await digests.due(conn, now)
    enqueued = 0
    for household_id, occurrence in due:
        enqueued += await enqueue_urgent(
            deps.redis,
            RUN_DIGEST,
            household_id,
            occurrence.kind,
            occurrence.period_start.isoformat(),
            occurrence.period_end.isoformat(),
            occurrence.due_at.isoformat(),
            job_id=digest_job_id(household_id, occurrence.kind, occurrence.period_start),
        )
    if enqueued:
        log.info("digest.sweep.completed", enqueued=enqueued)
    return enqueued


async def send(deps: Deps, household_id: int, occurrence: Occurrence) -> str:
    """Gather, phrase and send one household's digest for one period, once."""
    async with deps.db.household(household_id) as conn:
        if await digests.already_sent(conn, household_id, occurrence.kind, occurrence.period_start):
            return "already sent"
        timezone = await households.household_timezone(conn, household_id)
        people = await households.members(conn, household_id)
        tool_ctx = ToolContext(
            conn=conn,
            household_id=household_id,
            user_id=people[0].id if people else 0,
            timezone=timezone,
            now=occurrence.due_at,
            embedder=deps.embedder,
            members=people,
        )
        digest = await gather(tool_ctx, occurrence)
    if not people:
        digest = dataclasses.replace(digest, phrasing="skipped", chart=None)
    digest = await phrased(digest, deps.llm, household_language(people))
    png = await asyncio.to_thread(render_png, digest.chart) if digest.chart is not None else None
    outbox_ids = await _record(deps, household_id, occurrence, digest, png, people)
    if outbox_ids is None:
        return "already sent"
    for outbox_id in outbox_ids:
        await delivery.deliver(deps, outbox_id, household_id)
    log.info("digest.sent", phrasing=digest.phrasing, recipients=len(outbox_ids), chart=png is not None)
    return "sent" if outbox_ids else "skipped"


async def _record(
    deps: Deps,
    household_id: int,
    occurrence: Occurrence,
    digest: Digest,
    png: bytes | None,
    people: tuple[Member, ...],
) -> list[int] | None:
    """The run row, the chart and one outbox row per member, in one transaction; `None` if already sent."""
    async with deps.db.household(household_id) as conn:
        run_id = await digests.claim(conn, household_id, occurrence, phrasing=digest.phrasing, facts=digest.facts)
        if run_id is None:
            return None
        if digest.phrasing == "skipped":
            return []
        media_ids = []
        if png is not None and digest.chart is not None:
            words = description(digest.chart)
            media_ids.append(
                await media.save(conn, household_id, kind="chart", mime="image/png", data=png, description=words)
            )
            await digests.attach_media(conn, run_id, media_ids)
        payload = {
            "kind": "digest",
            "digest": occurrence.kind,
            "period_start": occurrence.period_start.isoformat(),
            "media_ids": media_ids,
        }
        outbox_ids = []
        for member in people:
            address = await identities.delivery_address(conn, member.id)
            outbox_id = await outbox.add(
                conn,
                household_id=household_id,
                user_id=member.id,
                channel=address.channel,
                recipient=address.recipient,
                text=digest.text,
                payload=payload,
            )
            assert outbox_id is not None  # rows without an inbox message never conflict
            outbox_ids.append(outbox_id)
        return outbox_ids
