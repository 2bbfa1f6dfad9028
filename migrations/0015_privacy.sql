-- Private means private. Memories, events, reminders, lists and list items are each either the household's
-- (`visibility = 'household'`) or their author's alone (`'private'`); a household row may also be kept from one
-- member (`hidden_from`: a surprise for them, seen by everyone else). PostgreSQL enforces it: a row is visible to
-- its author, and to the other members when it is the household's and not kept from the member the transaction
-- acts for (`app.user_id`). A transaction that acts for nobody (a group chat, a digest) sees only the rows every
-- member may see. A list item is visible only where its list is.
--
-- Every change says who made it: `updated_by` (with `updated_at`) on every row a member can change.

DO $$
DECLARE
    t text;
    author text;
BEGIN
    FOR t, author IN VALUES ('memories', 'author_id'), ('events', 'created_by'), ('reminders', 'created_by'),
                            ('lists', 'created_by'), ('list_items', 'created_by')
    LOOP
        IF t <> 'memories' THEN
            EXECUTE format('ALTER TABLE %I ADD COLUMN visibility text NOT NULL DEFAULT ''household'' '
                           'CHECK (visibility IN (''household'', ''private''))', t);
        END IF;
        EXECUTE format('ALTER TABLE %I ADD COLUMN hidden_from bigint REFERENCES users ON DELETE SET NULL, '
                       'ADD COLUMN updated_by bigint REFERENCES users ON DELETE SET NULL, '
                       'ADD CONSTRAINT %I CHECK (hidden_from IS NULL OR visibility = ''household''), '
                       'ADD CONSTRAINT %I CHECK (hidden_from IS NULL OR hidden_from <> %I)',
                       t, t || '_hidden_is_shared', t || '_hidden_not_author', author);
        EXECUTE format('DROP POLICY household_isolation ON %I', t);
    END LOOP;
END $$;

ALTER TABLE lists ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE list_items ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE budgets ADD COLUMN updated_by bigint REFERENCES users ON DELETE SET NULL;

-- The same rule on every table, written out so the planner inlines it (and keeps using the indexes).
CREATE POLICY member_visibility ON memories
    USING (household_id = faa_household()
           AND (author_id = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user()))))
    WITH CHECK (household_id = faa_household()
           AND (author_id = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user()))));
CREATE POLICY member_visibility ON events
    USING (household_id = faa_household()
           AND (created_by = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user()))))
    WITH CHECK (household_id = faa_household()
           AND (created_by = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user()))));
CREATE POLICY member_visibility ON reminders
    USING (household_id = faa_household()
           AND (created_by = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user()))))
    WITH CHECK (household_id = faa_household()
           AND (created_by = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user()))));
CREATE POLICY member_visibility ON lists
    USING (household_id = faa_household()
           AND (created_by = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user()))))
    WITH CHECK (household_id = faa_household()
           AND (created_by = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user()))));
-- The subquery reads `lists` under its own policy: an item of a list the member may not see is not seen either.
CREATE POLICY member_visibility ON list_items
    USING (household_id = faa_household()
           AND (created_by = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user())))
           AND EXISTS (SELECT 1 FROM lists l WHERE l.id = list_id))
    WITH CHECK (household_id = faa_household()
           AND (created_by = faa_user() OR (visibility = 'household' AND (hidden_from IS NULL OR hidden_from <> faa_user())))
           AND EXISTS (SELECT 1 FROM lists l WHERE l.id = list_id));

-- List names are unique among what one member sees: the household's lists, a member's private ones, and the lists
-- kept from one member (a private "gifts" list beside the household's "gifts" is two lists).
DROP INDEX lists_household_name;
CREATE UNIQUE INDEX lists_shared_name ON lists (household_id, lower(name))
    WHERE visibility = 'household' AND hidden_from IS NULL;
CREATE UNIQUE INDEX lists_private_name ON lists (household_id, created_by, lower(name)) WHERE visibility = 'private';
CREATE UNIQUE INDEX lists_hidden_name ON lists (household_id, hidden_from, lower(name)) WHERE hidden_from IS NOT NULL;

-- A budget alert tells each adult what that adult may see: one row per recipient, with the sum they were told.
-- Existing alerts count as sent to every adult of the household. (The owner of the tables may be subject to row-level
-- security too: it is lifted for this statement's table alone, inside this migration's transaction.)
ALTER TABLE budget_alerts NO FORCE ROW LEVEL SECURITY;
ALTER TABLE budget_alerts DROP CONSTRAINT budget_alerts_pkey, ADD COLUMN user_id bigint REFERENCES users ON DELETE CASCADE;
INSERT INTO budget_alerts (household_id, budget_id, month, threshold, spent, inbox_id, created_at, user_id)
    SELECT a.household_id, a.budget_id, a.month, a.threshold, a.spent, a.inbox_id, a.created_at, u.id
    FROM budget_alerts a JOIN users u ON u.household_id = a.household_id AND u.role IN ('owner', 'adult')
    WHERE a.user_id IS NULL;
DELETE FROM budget_alerts WHERE user_id IS NULL;
ALTER TABLE budget_alerts ALTER COLUMN user_id SET NOT NULL,
    ADD PRIMARY KEY (household_id, budget_id, month, threshold, user_id);
ALTER TABLE budget_alerts FORCE ROW LEVEL SECURITY;

-- Firing a reminder acts for its author, who may see it whatever its visibility. The job knows the reminder's id
-- and household only: this door names the author (an id, nothing else) before the transaction acts for them.
CREATE FUNCTION faa_reminder_author(p_household bigint, p_reminder bigint)
    RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT r.created_by FROM reminders r WHERE r.id = p_reminder AND r.household_id = p_household $$;

-- Reminders set before an event move with it and are cancelled with it, whoever moved it and whoever may see them
-- (a member's private "an hour before the dentist" follows the household's dentist). Only the event's own
-- reminders, only to the event's time.
CREATE FUNCTION faa_follow_event(p_household bigint, p_event bigint, p_by bigint)
    RETURNS void
    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ UPDATE reminders r
          SET next_fire_at = CASE WHEN e.status = 'cancelled' THEN NULL
                                  ELSE e.starts_at - make_interval(mins => r.minutes_before) END,
              occurrence_at = CASE WHEN e.status = 'cancelled' THEN r.occurrence_at
                                   ELSE e.starts_at - make_interval(mins => r.minutes_before) END,
              status = CASE WHEN e.status = 'cancelled' THEN 'cancelled' ELSE r.status END,
              updated_at = now(), updated_by = p_by
          FROM events e
          WHERE e.id = p_event AND e.household_id = p_household AND r.event_id = e.id
            AND r.household_id = p_household AND r.status = 'active' $$;

REVOKE ALL ON FUNCTION faa_reminder_author(bigint, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION faa_follow_event(bigint, bigint, bigint) FROM PUBLIC;
