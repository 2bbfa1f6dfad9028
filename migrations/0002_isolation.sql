-- Household isolation enforced by PostgreSQL: RLS with FORCE on every table that has household_id
-- (and on households itself). The household comes from set_config('app.household_id', …, true) inside each
-- transaction; a missing setting matches nothing. Private memories are visible to their author only.

CREATE FUNCTION faa_household() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(current_setting('app.household_id', true), '')::bigint $$;

CREATE FUNCTION faa_user() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(current_setting('app.user_id', true), '')::bigint $$;

ALTER TABLE households ENABLE ROW LEVEL SECURITY;
ALTER TABLE households FORCE ROW LEVEL SECURITY;
CREATE POLICY household_isolation ON households USING (id = faa_household()) WITH CHECK (id = faa_household());

DO $$
DECLARE t text;
BEGIN
    FOR t IN
        SELECT c.relname FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'household_id' AND NOT a.attisdropped
        WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> 'memories'
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY household_isolation ON %I USING (household_id = faa_household()) '
                       'WITH CHECK (household_id = faa_household())', t);
    END LOOP;
END $$;

ALTER TABLE memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
CREATE POLICY household_isolation ON memories
    USING (household_id = faa_household() AND (visibility = 'household' OR author_id = faa_user()))
    WITH CHECK (household_id = faa_household() AND (visibility = 'household' OR author_id = faa_user()));

-- Narrow doors that must work before a household is known (who is this sender?) or across households
-- (the sweeper). They run as the owner and return ids only.

CREATE FUNCTION faa_resolve_api_token(token_hash bytea)
    RETURNS TABLE (user_id bigint, household_id bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT u.id, u.household_id FROM users u WHERE u.api_token_hash = token_hash $$;

CREATE FUNCTION faa_resolve_identity(p_channel text, p_external_id text)
    RETURNS TABLE (user_id bigint, household_id bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT i.user_id, i.household_id FROM user_identities i
          WHERE i.channel = p_channel AND i.external_id = p_external_id $$;

CREATE FUNCTION faa_stale_inbox(p_status text, older_than interval, max_rows integer)
    RETURNS TABLE (id bigint, household_id bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT i.id, i.household_id FROM inbox i
          WHERE i.status = p_status AND i.updated_at < now() - older_than
          ORDER BY i.updated_at LIMIT max_rows $$;

CREATE FUNCTION faa_due_outbox(older_than interval, max_rows integer)
    RETURNS TABLE (id bigint, household_id bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT o.id, o.household_id FROM outbox o
          WHERE o.status = 'pending' AND o.next_attempt_at < now() - older_than
          ORDER BY o.next_attempt_at LIMIT max_rows $$;

REVOKE ALL ON FUNCTION faa_resolve_api_token(bytea) FROM PUBLIC;
REVOKE ALL ON FUNCTION faa_resolve_identity(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION faa_stale_inbox(text, interval, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION faa_due_outbox(interval, integer) FROM PUBLIC;
