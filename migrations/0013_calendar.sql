-- The calendar: events with a start (an instant, or a day when all-day), an optional end and RRULE, belonging to
-- one member or to the whole household. `uid` is the RFC 5545 UID: importing the same .ics twice updates the
-- events it created instead of adding them again. A reminder may hang off an event ("an hour before the
-- dentist"): it keeps `minutes_before` and moves when the event moves.

CREATE TABLE events (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id     bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    member_id        bigint REFERENCES users ON DELETE CASCADE,  -- whose event; NULL: the whole household's
    created_by       bigint REFERENCES users ON DELETE SET NULL,
    uid              text NOT NULL CHECK (length(uid) BETWEEN 1 AND 255),
    title            text NOT NULL CHECK (length(title) BETWEEN 1 AND 300),
    starts_at        timestamptz NOT NULL,
    ends_at          timestamptz,
    all_day          boolean NOT NULL DEFAULT false,
    timezone         text NOT NULL,
    rrule            text CHECK (length(rrule) <= 300),
    source           text NOT NULL CHECK (source IN ('chat', 'ics', 'web')),
    source_inbox_id  bigint REFERENCES inbox ON DELETE SET NULL,
    status           text NOT NULL DEFAULT 'confirmed' CHECK (status IN ('confirmed', 'cancelled')),
    sequence         integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (household_id, uid),
    CHECK (ends_at IS NULL OR ends_at >= starts_at)
);
CREATE INDEX events_household_start ON events (household_id, starts_at);
CREATE INDEX events_member ON events (member_id) WHERE member_id IS NOT NULL;

ALTER TABLE events ENABLE ROW LEVEL SECURITY;
ALTER TABLE events FORCE ROW LEVEL SECURITY;
CREATE POLICY household_isolation ON events
    USING (household_id = faa_household()) WITH CHECK (household_id = faa_household());

ALTER TABLE reminders
    ADD COLUMN event_id       bigint REFERENCES events ON DELETE CASCADE,
    ADD COLUMN minutes_before integer CHECK (minutes_before BETWEEN 0 AND 40320),
    ADD CONSTRAINT reminders_event_offset CHECK ((event_id IS NULL) = (minutes_before IS NULL));
CREATE INDEX reminders_event ON reminders (event_id) WHERE event_id IS NOT NULL;

-- The key that signs the household's calendar feed URLs; rotating it revokes every URL given out before.
ALTER TABLE households
    ADD COLUMN calendar_secret bytea NOT NULL
        DEFAULT decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');

-- A member who asked to be forgotten: the row stays (household entries and the last reply still point at it) under
-- an anonymous name, with no way in.
ALTER TABLE users ADD COLUMN forgotten_at timestamptz;

-- A phone calendar fetching a feed carries only the URL: the key to check its signature is read across households
-- through this door (the secret of one household, never its rows).
CREATE FUNCTION faa_calendar_secret(p_household bigint)
    RETURNS bytea
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT h.calendar_secret FROM households h WHERE h.id = p_household $$;

REVOKE ALL ON FUNCTION faa_calendar_secret(bigint) FROM PUBLIC;
