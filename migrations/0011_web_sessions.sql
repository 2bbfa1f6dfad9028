-- The web app: members' browser sessions, and the one-time setup link that creates the first household.
--
-- A session is opened by spending a one-time code: a sign-in code from the `invites` table (the same codes
-- `faa invite` makes, one per link) or the setup code. Only hashes are stored. Sessions are household rows under
-- the same row-level security as everything else; the browser's cookie is resolved through a narrow door.

CREATE TABLE web_sessions (
    token_hash    bytea PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    user_id       bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions (household_id, user_id);

ALTER TABLE web_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE web_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY household_isolation ON web_sessions
    USING (household_id = faa_household()) WITH CHECK (household_id = faa_household());

-- Setup codes belong to no household: RLS without a policy hides every row from the app role; only the owner
-- (the command line that prints the link, and the door below) reads them.
CREATE TABLE setup_codes (
    code_hash   bytea PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
ALTER TABLE setup_codes ENABLE ROW LEVEL SECURITY;

-- Who holds this session cookie: the member and what the pages need to greet them, or nothing once expired.
CREATE FUNCTION faa_resolve_web_session(p_token_hash bytea)
    RETURNS TABLE (user_id bigint, household_id bigint, name text, role text, locale text, timezone text,
                   household_name text)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT u.id, u.household_id, u.name, u.role, u.locale, u.timezone, h.name
          FROM web_sessions s JOIN users u ON u.id = s.user_id JOIN households h ON h.id = s.household_id
          WHERE s.token_hash = p_token_hash AND s.expires_at > now() $$;

-- A sign-in link: spend an unexpired invite code once and open a session for its member.
CREATE FUNCTION faa_open_web_session(p_code_hash bytea, p_token_hash bytea, p_ttl interval)
    RETURNS TABLE (user_id bigint, household_id bigint)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    spent invites%ROWTYPE;
BEGIN
    UPDATE invites i SET used_at = now(), used_channel = 'web-session', used_by = 'browser'
     WHERE i.code_hash = p_code_hash AND i.used_at IS NULL AND i.expires_at > now()
    RETURNING * INTO spent;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO web_sessions (token_hash, household_id, user_id, expires_at)
         VALUES (p_token_hash, spent.household_id, spent.user_id, now() + p_ttl);
    RETURN QUERY SELECT spent.user_id, spent.household_id;
END $$;

-- The setup link: spend the code once, create the household and its owner (with their web identity and API
-- token hash, as `faa member add` does) and open the owner's first session.
CREATE FUNCTION faa_setup_household(
    p_code_hash bytea, p_household text, p_timezone text, p_member text, p_locale text,
    p_api_token_hash bytea, p_token_hash bytea, p_ttl interval)
    RETURNS TABLE (user_id bigint, household_id bigint)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    new_household bigint;
    new_user bigint;
BEGIN
    UPDATE setup_codes c SET used_at = now()
     WHERE c.code_hash = p_code_hash AND c.used_at IS NULL AND c.expires_at > now();
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO households (name, timezone) VALUES (p_household, p_timezone) RETURNING id INTO new_household;
    INSERT INTO users (household_id, name, timezone, locale, role, api_token_hash)
         VALUES (new_household, p_member, p_timezone, p_locale, 'owner', p_api_token_hash) RETURNING id INTO new_user;
    INSERT INTO user_identities (household_id, user_id, channel, external_id, preferred)
         VALUES (new_household, new_user, 'web', new_user::text, true);
    INSERT INTO web_sessions (token_hash, household_id, user_id, expires_at)
         VALUES (p_token_hash, new_household, new_user, now() + p_ttl);
    RETURN QUERY SELECT new_user, new_household;
END $$;

REVOKE ALL ON FUNCTION faa_resolve_web_session(bytea) FROM PUBLIC;
REVOKE ALL ON FUNCTION faa_open_web_session(bytea, bytea, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION faa_setup_household(bytea, text, text, text, text, bytea, bytea, interval) FROM PUBLIC;
