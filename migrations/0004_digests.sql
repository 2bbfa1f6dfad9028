-- Digests: which summaries each household wants and when (local time in the household's timezone), and one row
-- per digest sent. A run row is unique per household + kind + period and commits with its outbox rows, so a
-- digest goes out once however many workers sweep.

CREATE TABLE digest_schedules (
    household_id   bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    kind           text NOT NULL CHECK (kind IN ('monthly', 'weekly', 'morning')),
    enabled        boolean NOT NULL,
    day_of_month   smallint NOT NULL DEFAULT 1 CHECK (day_of_month BETWEEN 1 AND 28),
    weekday        smallint NOT NULL DEFAULT 1 CHECK (weekday BETWEEN 1 AND 7),  -- ISO: 1 = Monday
    at_time        time NOT NULL DEFAULT '08:00',
    -- Occurrences before this moment never fire: changing a schedule does not send a past period at once.
    enabled_since  timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (household_id, kind)
);

CREATE TABLE digest_runs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    kind          text NOT NULL CHECK (kind IN ('monthly', 'weekly', 'morning')),
    period_start  date NOT NULL,
    period_end    date NOT NULL,
    due_at        timestamptz NOT NULL,
    phrasing      text NOT NULL CHECK (phrasing IN ('llm', 'template', 'skipped')),
    facts         jsonb NOT NULL,
    media_ids     bigint[] NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (household_id, kind, period_start)
);

ALTER TABLE digest_schedules ENABLE ROW LEVEL SECURITY;
ALTER TABLE digest_schedules FORCE ROW LEVEL SECURITY;
CREATE POLICY household_isolation ON digest_schedules
    USING (household_id = faa_household()) WITH CHECK (household_id = faa_household());
ALTER TABLE digest_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE digest_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY household_isolation ON digest_runs
    USING (household_id = faa_household()) WITH CHECK (household_id = faa_household());

-- Every household's schedule for every kind, defaults filled in: the monthly expense digest on the 1st at 08:00
-- from the household's creation on; weekly and morning digests only when chosen. security_invoker keeps RLS.
CREATE VIEW digest_effective_schedules WITH (security_invoker = true) AS
    SELECT h.id AS household_id,
           k.kind,
           h.timezone,
           coalesce(s.enabled, k.kind = 'monthly') AS enabled,
           coalesce(s.day_of_month, 1::smallint) AS day_of_month,
           coalesce(s.weekday, 1::smallint) AS weekday,
           coalesce(s.at_time, '08:00'::time) AS at_time,
           coalesce(s.enabled_since, h.created_at) AS enabled_since
    FROM households h
    CROSS JOIN (VALUES ('monthly'), ('weekly'), ('morning')) AS k (kind)
    LEFT JOIN digest_schedules s ON s.household_id = h.id AND s.kind = k.kind;

-- The sweeper's door across households: enabled schedules and the latest period each already sent. Ids, times
-- and settings only.
CREATE FUNCTION faa_digest_schedules()
    RETURNS TABLE (household_id bigint, kind text, timezone text, day_of_month smallint, weekday smallint,
                   at_time time, enabled_since timestamptz, last_period date)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT e.household_id, e.kind, e.timezone, e.day_of_month, e.weekday, e.at_time, e.enabled_since,
                 (SELECT max(r.period_start) FROM digest_runs r
                  WHERE r.household_id = e.household_id AND r.kind = e.kind)
          FROM digest_effective_schedules e WHERE e.enabled $$;

REVOKE ALL ON FUNCTION faa_digest_schedules() FROM PUBLIC;
