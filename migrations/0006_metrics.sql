-- A narrow door for the metrics endpoint: how many messages wait, across households, as counts only.

CREATE FUNCTION faa_backlog()
    RETURNS TABLE (box text, status text, messages bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT 'inbox', i.status, count(*) FROM inbox i
          WHERE i.status IN ('queued', 'processing') GROUP BY i.status
          UNION ALL
          SELECT 'outbox', o.status, count(*) FROM outbox o
          WHERE o.status = 'pending' GROUP BY o.status $$;

REVOKE ALL ON FUNCTION faa_backlog() FROM PUBLIC;
