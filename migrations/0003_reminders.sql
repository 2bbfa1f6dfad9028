-- Reminders that fire on time, exactly once, in the member's timezone.
--
-- A reminder keeps the wall-clock time of the timezone its time was given in (`timezone`): `dtstart_local` is
-- the first occurrence as that wall clock reads it, the anchor of the RRULE. `next_fire_at` is the next instant
-- to fire (an occurrence, or a snooze of one); `occurrence_at` is the occurrence that firing stands for.
-- Each firing is a `reminder_firings` row whose key (reminder, fire_at) makes a second firing impossible.

ALTER TABLE reminders
    ADD COLUMN dtstart_local       timestamp,
    ADD COLUMN occurrence_at       timestamptz,
    ADD COLUMN for_household       boolean NOT NULL DEFAULT false,
    ADD COLUMN changed_by_inbox_id bigint REFERENCES inbox ON DELETE SET NULL,
    ADD COLUMN updated_at          timestamptz NOT NULL DEFAULT now(),
    ADD CONSTRAINT reminders_active_has_time CHECK (status <> 'active' OR next_fire_at IS NOT NULL);
CREATE INDEX reminders_changed_by ON reminders (changed_by_inbox_id) WHERE changed_by_inbox_id IS NOT NULL;
CREATE INDEX reminders_household ON reminders (household_id, status, next_fire_at);

-- Quiet hours, read on the member's own wall clock; a delivery inside them waits until they end.
ALTER TABLE users
    ADD COLUMN quiet_start time,
    ADD COLUMN quiet_end   time,
    ADD CONSTRAINT users_quiet_hours CHECK ((quiet_start IS NULL) = (quiet_end IS NULL) AND
                                           (quiet_start IS NULL OR quiet_start <> quiet_end));

CREATE TABLE reminder_firings (
    household_id     bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    reminder_id      bigint NOT NULL REFERENCES reminders ON DELETE CASCADE,
    fire_at          timestamptz NOT NULL,
    occurrence_at    timestamptz NOT NULL,
    fired_at         timestamptz NOT NULL,
    recipient_ids    bigint[] NOT NULL,
    acknowledged_at  timestamptz,
    PRIMARY KEY (reminder_id, fire_at)
);
CREATE INDEX reminder_firings_recent ON reminder_firings (household_id, fired_at DESC);

ALTER TABLE reminder_firings ENABLE ROW LEVEL SECURITY;
ALTER TABLE reminder_firings FORCE ROW LEVEL SECURITY;
CREATE POLICY household_isolation ON reminder_firings
    USING (household_id = faa_household()) WITH CHECK (household_id = faa_household());

-- The reminder sweeper's door across households: ids and times only, due up to `until`.
CREATE FUNCTION faa_due_reminders(until timestamptz, max_rows integer)
    RETURNS TABLE (id bigint, household_id bigint, next_fire_at timestamptz)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT r.id, r.household_id, r.next_fire_at FROM reminders r
          WHERE r.status = 'active' AND r.next_fire_at <= until
          ORDER BY r.next_fire_at LIMIT max_rows $$;

REVOKE ALL ON FUNCTION faa_due_reminders(timestamptz, integer) FROM PUBLIC;

-- The notification feed of a member: messages that answer no inbox message (reminders, digests).
CREATE INDEX outbox_notifications ON outbox (user_id, sent_at DESC) WHERE inbox_id IS NULL AND status = 'sent';
