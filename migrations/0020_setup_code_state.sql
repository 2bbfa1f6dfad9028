-- Whether a setup link can still be used, so its page says so before anyone fills in the form: 'open', 'used'
-- (the household it made exists) or 'gone' (expired, replaced by a newer link, or never printed). The app role
-- cannot read setup codes; this tells it only the state of the one whose code it holds.
CREATE FUNCTION faa_setup_code_state(p_code_hash bytea) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT coalesce(
              (SELECT CASE WHEN c.used_at IS NOT NULL THEN 'used' WHEN c.expires_at > now() THEN 'open' ELSE 'gone' END
                 FROM setup_codes c WHERE c.code_hash = p_code_hash),
              'gone') $$;

REVOKE ALL ON FUNCTION faa_setup_code_state(bytea) FROM PUBLIC;
