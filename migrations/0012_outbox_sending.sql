-- Delivery marks a row 'sending' (committed) before it hands the reply to the channel, and 'sent' after. A row
-- left 'sending' means the process stopped, or lost the database, in between: the reply may have gone out. The
-- sweeper sends such a row again only after a grace (worker.delivery.SENDING_STALE_S) (next_attempt_at is when its sending began), so a reply
-- can be sent twice only when its process died in that window — never because one statement failed.

ALTER TABLE outbox DROP CONSTRAINT outbox_status_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_status_check CHECK (status IN ('pending', 'sending', 'sent', 'failed'));
CREATE INDEX outbox_sending ON outbox (next_attempt_at) WHERE status = 'sending';

DROP FUNCTION faa_due_outbox(interval, integer);
CREATE FUNCTION faa_due_outbox(older_than interval, sending_older_than interval, max_rows integer)
    RETURNS TABLE (id bigint, household_id bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ (SELECT o.id, o.household_id FROM outbox o
           WHERE o.status = 'pending' AND o.next_attempt_at < now() - older_than
           ORDER BY o.next_attempt_at LIMIT max_rows)
          UNION ALL
          (SELECT o.id, o.household_id FROM outbox o
           WHERE o.status = 'sending' AND o.next_attempt_at < now() - sending_older_than
           ORDER BY o.next_attempt_at LIMIT max_rows) $$;
REVOKE ALL ON FUNCTION faa_due_outbox(interval, interval, integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION faa_backlog()
    RETURNS TABLE (box text, status text, messages bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT 'inbox', i.status, count(*) FROM inbox i
          WHERE i.status IN ('queued', 'processing') GROUP BY i.status
          UNION ALL
          SELECT 'outbox', o.status, count(*) FROM outbox o
          WHERE o.status IN ('pending', 'sending') GROUP BY o.status $$;
