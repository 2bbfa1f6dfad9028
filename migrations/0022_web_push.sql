-- Web Push (RFC 8030, 8291, 8292): the household's VAPID key, the browsers its members turned push on in, and the
-- push messages the outbox sends them.

-- The key that signs every push to the household's members (the raw 32-byte P-256 private value; the public half is
-- derived from it). It is made with the household (`tools/storage/households.py`); a household made before this
-- migration gets one when the web app first offers push to one of its members (`tools/storage/push.py`).
ALTER TABLE households ADD COLUMN vapid_private_key bytea CHECK (octet_length(vapid_private_key) = 32);

-- One row per browser (its push service's endpoint) and member. A browser that another member of the household turns
-- push on in moves to them: it shows one member's notifications, the one signed in when it was turned on.
CREATE TABLE push_subscriptions (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    user_id       bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    endpoint      text NOT NULL CHECK (length(endpoint) <= 2048),
    p256dh        text NOT NULL CHECK (length(p256dh) <= 200),
    auth          text NOT NULL CHECK (length(auth) <= 100),
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (household_id, endpoint)
);
CREATE INDEX push_subscriptions_member ON push_subscriptions (household_id, user_id);
ALTER TABLE push_subscriptions ENABLE ROW LEVEL SECURITY;
ALTER TABLE push_subscriptions FORCE ROW LEVEL SECURITY;
CREATE POLICY household_isolation ON push_subscriptions
    USING (household_id = faa_household()) WITH CHECK (household_id = faa_household());

-- A push message is an outbox row of its own (channel 'webpush', recipient: the subscription's id) that follows the
-- web app's row it tells of (`source_id`): one per row and browser, however often the web row is delivered again.
ALTER TABLE outbox ADD COLUMN source_id bigint REFERENCES outbox ON DELETE CASCADE;
CREATE UNIQUE INDEX outbox_push_once ON outbox (source_id, recipient) WHERE source_id IS NOT NULL;
