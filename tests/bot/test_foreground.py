import asyncio
import contextvars

from aiohttp.test_utils import make_mocked_request

from bot.foreground import Foreground

WHO = contextvars.ContextVar("who", default="nobody")


def request():
    return make_mocked_request("POST", "/v1/messages")


async def test_work_put_off_runs_in_its_own_context_once_the_last_request_in_hand_is_answered():
    foreground, first, second = Foreground(max_wait_s=10), request(), request()
    foreground.enter(first)
    foreground.enter(second)
    ran: list[str] = []
    WHO.set("anna")
    foreground.after(lambda: ran.append(WHO.get()))
    WHO.set("ben")
    foreground.after(lambda: ran.append(WHO.get()))
    enqueued = asyncio.create_task(foreground.clear())

    foreground.leave(first)
    foreground.leave(first)  # a second leave of the same request changes nothing
    await asyncio.sleep(0.01)
    assert ran == [] and not enqueued.done() and foreground.in_hand == 1

    foreground.leave(second)
    await asyncio.sleep(0)
    assert ran == ["anna", "ben"] and enqueued.done() and foreground.in_hand == 0


async def test_with_nothing_in_hand_nothing_waits():
    foreground, ran = Foreground(max_wait_s=10), []
    await asyncio.wait_for(foreground.clear(), 0.1)
    foreground.after(lambda: ran.append(1))
    await asyncio.sleep(0)
    assert ran == [1]


async def test_under_sustained_load_work_waits_at_most_max_wait():
    foreground, busy, ran = Foreground(max_wait_s=0.05), request(), []
    foreground.enter(busy)  # never answered
    loop = asyncio.get_running_loop()
    put_off = loop.time()
    foreground.after(lambda: ran.append(loop.time() - put_off))
    await asyncio.wait_for(foreground.clear(), 1)
    await asyncio.sleep(0)
    assert len(ran) == 1 and 0.04 <= ran[0] < 0.5

    foreground.after(lambda: ran.append(loop.time() - put_off))  # the next deadline is armed afresh
    await asyncio.wait_for(foreground.clear(), 1)
    await asyncio.sleep(0)
    assert len(ran) == 2


async def test_a_cancelled_waiter_leaves_the_others_to_run():
    foreground, busy = Foreground(max_wait_s=10), request()
    foreground.enter(busy)
    cancelled = asyncio.create_task(foreground.clear())
    kept = asyncio.create_task(foreground.clear())
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.sleep(0)
    foreground.leave(busy)
    await asyncio.wait_for(kept, 0.1)
    assert cancelled.cancelled()
