-- A journal entry written on its own (an LLM response, a transcript) in one round trip instead of three (BEGIN
-- with the household, INSERT, COMMIT): called outside a transaction, the function's statement is its own
-- transaction, which it scopes to the household as Database.household does, and the entry is written under
-- row-level security (SECURITY INVOKER: it can do nothing its caller could not). Like the engine's other steps the
-- commit does not wait for the disk; the message's reply commit, which follows, does.
CREATE FUNCTION faa_journal_step(p_household bigint, p_user bigint, p_inbox bigint, p_seq integer, p_kind text,
                                 p_payload jsonb)
    RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = public, pg_temp
    AS $$
BEGIN
    PERFORM set_config('app.household_id', p_household::text, true),
            set_config('app.user_id', coalesce(p_user::text, ''), true),
            set_config('synchronous_commit', 'off', true);
    INSERT INTO journal (household_id, inbox_id, seq, kind, payload)
    VALUES (p_household, p_inbox, p_seq, p_kind, p_payload);
END $$;
