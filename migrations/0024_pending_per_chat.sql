-- A question FAA asked waits in the chat it was asked in, one per member and chat: a message in the family group
-- that FAA asks about no longer takes the place of the question waiting in the member's own chat.
ALTER TABLE pending_clarifications ADD COLUMN chat text NOT NULL DEFAULT '';
UPDATE pending_clarifications SET chat = coalesce(state ->> 'chat', ''), state = state - 'chat';
ALTER TABLE pending_clarifications DROP CONSTRAINT pending_clarifications_pkey;
ALTER TABLE pending_clarifications ADD PRIMARY KEY (user_id, chat);
