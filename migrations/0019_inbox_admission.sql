-- Fair by household: a message's job starts only when its member and its household have fewer messages in flight
-- than their limits (WORKER_MEMBER_IN_FLIGHT, WORKER_HOUSEHOLD_IN_FLIGHT), and a finished message hands its slot to
-- the oldest waiting message of its household (worker/messages.py). Both look at a household's open messages only:
-- a flood of 5,000 queued rows, or years of answered ones, must not make each check scan the household's history.
CREATE INDEX inbox_open_member ON inbox (household_id, user_id, id) WHERE status IN ('queued', 'processing');
