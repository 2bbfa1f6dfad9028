-- Onboarding on chat channels: a one-time invite code links a sender (Telegram user, Threema ID, email address)
-- to a member. One member may be linked on several channels; the latest link becomes the preferred one.

CREATE TABLE invites (
    code_hash     bytea PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    user_id       bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz,
    used_channel  text,
    used_by       text
);
CREATE INDEX invites_user ON invites (household_id, user_id);

ALTER TABLE invites ENABLE ROW LEVEL SECURITY;
ALTER TABLE invites FORCE ROW LEVEL SECURITY;
CREATE POLICY household_isolation ON invites
    USING (household_id = faa_household()) WITH CHECK (household_id = faa_household());

-- The code is all an unknown sender has, so redeeming must look across households: a narrow door that takes
-- the code's hash, spends it at most once, links the sender and returns ids only. An identity already linked
-- to someone is never moved silently: the caller learns nothing was linked.
CREATE FUNCTION faa_redeem_invite(p_code_hash bytea, p_channel text, p_external_id text)
    RETURNS TABLE (user_id bigint, household_id bigint)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    spent invites%ROWTYPE;
BEGIN
    SELECT * INTO spent FROM invites i
     WHERE i.code_hash = p_code_hash AND i.used_at IS NULL AND i.expires_at > now()
     FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM user_identities ui WHERE ui.channel = p_channel AND ui.external_id = p_external_id) THEN
        RETURN;
    END IF;
    UPDATE invites SET used_at = now(), used_channel = p_channel, used_by = p_external_id
     WHERE code_hash = p_code_hash;
    UPDATE user_identities SET preferred = false WHERE user_identities.user_id = spent.user_id;
    INSERT INTO user_identities (household_id, user_id, channel, external_id, preferred)
         VALUES (spent.household_id, spent.user_id, p_channel, p_external_id, true);
    RETURN QUERY SELECT spent.user_id, spent.household_id;
END $$;

REVOKE ALL ON FUNCTION faa_redeem_invite(bytea, text, text) FROM PUBLIC;
