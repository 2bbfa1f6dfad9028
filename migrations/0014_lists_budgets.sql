-- Shared lists (shopping, to-do, packing; several per household) and monthly budgets with their alerts.
--
-- A list item is its own row: two members adding at once insert two rows, and ticking one item updates that row
-- alone, so no edit can overwrite another's. A budget alert is a row whose key (budget, month, threshold) makes a
-- second alert for the same threshold in the same month impossible.

CREATE TABLE lists (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 60),
    kind          text NOT NULL DEFAULT 'other' CHECK (kind IN ('shopping', 'todo', 'packing', 'other')),
    created_by    bigint REFERENCES users ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX lists_household_name ON lists (household_id, lower(name));

CREATE TABLE list_items (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id     bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    list_id          bigint NOT NULL REFERENCES lists ON DELETE CASCADE,
    text             text NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
    quantity         text CHECK (length(quantity) BETWEEN 1 AND 40),
    assignee_id      bigint REFERENCES users ON DELETE SET NULL,
    done_at          timestamptz,
    done_by          bigint REFERENCES users ON DELETE SET NULL,
    created_by       bigint REFERENCES users ON DELETE SET NULL,
    source_inbox_id  bigint REFERENCES inbox ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    cleared_at       timestamptz
);
CREATE INDEX list_items_open ON list_items (household_id, list_id, created_at) WHERE cleared_at IS NULL;

CREATE TABLE budgets (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    category      text NOT NULL CHECK (category ~ '^\w[\w-]*$' AND length(category) <= 40),
    currency      char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    amount        numeric(14, 2) NOT NULL CHECK (amount > 0),
    created_by    bigint REFERENCES users ON DELETE SET NULL,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (household_id, category, currency)
);

CREATE TABLE budget_alerts (
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    budget_id     bigint NOT NULL REFERENCES budgets ON DELETE CASCADE,
    month         date NOT NULL,
    threshold     integer NOT NULL CHECK (threshold IN (80, 100)),
    spent         numeric(14, 2) NOT NULL,
    inbox_id      bigint REFERENCES inbox ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (household_id, budget_id, month, threshold)
);
CREATE INDEX budget_alerts_inbox ON budget_alerts (inbox_id) WHERE inbox_id IS NOT NULL;

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['lists', 'list_items', 'budgets', 'budget_alerts']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY household_isolation ON %I USING (household_id = faa_household()) '
                       'WITH CHECK (household_id = faa_household())', t);
    END LOOP;
END $$;
