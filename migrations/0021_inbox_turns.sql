-- A household's turns cost the same whatever its backlog. A message waits in the inbox ('queued') until its
-- household has a free slot; then it is admitted ('processing') and only then gets a job (bot/channels/intake.py,
-- worker/messages.py). Admission counts the household's running messages and looks up each member's oldest waiting
-- one: with one index over both states, each of those walked the household's whole backlog (EXPLAIN ANALYZE with
-- 5,000 waiting: 4,997 rows removed by filter, 76 buffers, ~0.6 ms, in every admission). One index per state:
CREATE INDEX inbox_waiting ON inbox (household_id, user_id, id) WHERE status = 'queued';
CREATE INDEX inbox_running ON inbox (household_id, user_id) WHERE status = 'processing';
DROP INDEX inbox_open_member;

-- The sweep's two questions, neither answered by walking the waiting messages: which households have a message
-- that has waited `older_than` (one index probe per household with any waiting, from after `after_household`), and
-- which running messages' leases ran out.
CREATE INDEX inbox_leases ON inbox (updated_at) WHERE status = 'processing';

CREATE FUNCTION faa_waiting_households(after_household bigint, older_than interval, max_rows integer)
    RETURNS TABLE (household_id bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ WITH RECURSIVE h (id) AS (
              (SELECT i.household_id FROM inbox i
               WHERE i.status = 'queued' AND i.household_id > after_household
               ORDER BY i.household_id LIMIT 1)
              UNION ALL
              SELECT (SELECT i.household_id FROM inbox i
                      WHERE i.status = 'queued' AND i.household_id > h.id
                      ORDER BY i.household_id LIMIT 1)
              FROM h WHERE h.id IS NOT NULL)
          SELECT h.id FROM h
          WHERE h.id IS NOT NULL
            AND EXISTS (SELECT 1 FROM inbox i
                        WHERE i.household_id = h.id AND i.status = 'queued' AND i.updated_at < now() - older_than)
          LIMIT max_rows $$;

CREATE FUNCTION faa_expired_leases(older_than interval, max_rows integer)
    RETURNS TABLE (id bigint, household_id bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT i.id, i.household_id FROM inbox i
          WHERE i.status = 'processing' AND i.updated_at < now() - older_than
          ORDER BY i.updated_at LIMIT max_rows $$;

REVOKE ALL ON FUNCTION faa_waiting_households(bigint, interval, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION faa_expired_leases(interval, integer) FROM PUBLIC;
