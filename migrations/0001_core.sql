-- Core schema: households, members, identities, memories, the message path (inbox, journal, outbox),
-- interactions, experiments, media, reminders. {{EMBEDDING_DIM}} is fixed here, from settings.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE faa_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
INSERT INTO faa_meta (key, value) VALUES ('embedding_dim', '{{EMBEDDING_DIM}}');

CREATE TABLE households (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    timezone    text NOT NULL DEFAULT 'UTC',
    settings    jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id    bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    timezone        text NOT NULL DEFAULT 'UTC',
    locale          text NOT NULL DEFAULT 'en',
    role            text NOT NULL DEFAULT 'adult' CHECK (role IN ('owner', 'adult', 'child')),
    api_token_hash  bytea UNIQUE,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_household_name ON users (household_id, lower(name));

CREATE TABLE user_identities (
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    user_id       bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    channel       text NOT NULL,
    external_id   text NOT NULL,
    preferred     boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel, external_id)
);
CREATE INDEX user_identities_user ON user_identities (user_id);

CREATE TABLE inbox (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    user_id       bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    channel       text NOT NULL,
    external_id   text NOT NULL,
    text          text NOT NULL DEFAULT '',
    payload       jsonb NOT NULL DEFAULT '{}',
    status        text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'processing', 'done', 'failed')),
    attempts      integer NOT NULL DEFAULT 0,
    error         text,
    trace_id      text NOT NULL,
    received_at   timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    completed_at  timestamptz,
    UNIQUE (channel, external_id)
);
CREATE INDEX inbox_open ON inbox (updated_at) WHERE status IN ('queued', 'processing');
CREATE INDEX inbox_household_user ON inbox (household_id, user_id, received_at DESC);

-- Every LLM response and tool effect of one message, in order, so a retried job replays instead of redoing.
CREATE TABLE journal (
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    inbox_id      bigint NOT NULL REFERENCES inbox ON DELETE CASCADE,
    seq           integer NOT NULL,
    kind          text NOT NULL,
    payload       jsonb NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (inbox_id, seq)
);

CREATE TABLE outbox (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id     bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    user_id          bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    inbox_id         bigint REFERENCES inbox ON DELETE CASCADE,
    channel          text NOT NULL,
    recipient        text NOT NULL,
    text             text NOT NULL,
    payload          jsonb NOT NULL DEFAULT '{}',
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    sent_at          timestamptz
);
CREATE UNIQUE INDEX outbox_one_reply ON outbox (inbox_id) WHERE inbox_id IS NOT NULL;
CREATE INDEX outbox_pending ON outbox (next_attempt_at) WHERE status = 'pending';

CREATE TABLE memories (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id      bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    author_id         bigint REFERENCES users ON DELETE SET NULL,
    content           text NOT NULL,
    ai_understanding  jsonb NOT NULL DEFAULT '{}',
    embedding         vector({{EMBEDDING_DIM}}),
    amount            numeric(14, 2),
    currency          char(3) CHECK (currency ~ '^[A-Z]{3}$'),
    occurred_at       timestamptz NOT NULL DEFAULT now(),
    visibility        text NOT NULL DEFAULT 'household' CHECK (visibility IN ('household', 'private')),
    source_inbox_id   bigint REFERENCES inbox ON DELETE SET NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    deleted_at        timestamptz,
    CHECK (amount IS NULL OR currency IS NOT NULL)
);
CREATE INDEX memories_household_time ON memories (household_id, occurred_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX memories_understanding ON memories USING gin (ai_understanding jsonb_path_ops);
CREATE INDEX memories_category ON memories (household_id, (ai_understanding ->> 'category'), occurred_at)
    WHERE deleted_at IS NULL;
CREATE INDEX memories_kind ON memories (household_id, (ai_understanding ->> 'kind'), occurred_at)
    WHERE deleted_at IS NULL;
CREATE INDEX memories_person ON memories (household_id, lower(ai_understanding ->> 'person'))
    WHERE deleted_at IS NULL;
CREATE INDEX memories_merchant ON memories (household_id, lower(ai_understanding ->> 'merchant'))
    WHERE deleted_at IS NULL;
CREATE INDEX memories_embedding ON memories USING hnsw (embedding vector_cosine_ops);
CREATE INDEX memories_source ON memories (source_inbox_id);

CREATE TABLE pending_clarifications (
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    user_id       bigint PRIMARY KEY REFERENCES users ON DELETE CASCADE,
    inbox_id      bigint NOT NULL REFERENCES inbox ON DELETE CASCADE,
    question      text NOT NULL,
    options       jsonb NOT NULL DEFAULT '[]',
    state         jsonb NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL DEFAULT now() + interval '1 day'
);

CREATE TABLE interactions (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id    bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    user_id         bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    inbox_id        bigint UNIQUE REFERENCES inbox ON DELETE CASCADE,
    channel         text NOT NULL,
    user_text       text NOT NULL,
    reply_text      text NOT NULL,
    outcome         text NOT NULL,
    prompt_version  text,
    trace           jsonb NOT NULL DEFAULT '{}',
    llm_calls       integer NOT NULL DEFAULT 0,
    tool_calls      integer NOT NULL DEFAULT 0,
    tokens_in       integer NOT NULL DEFAULT 0,
    tokens_out      integer NOT NULL DEFAULT 0,
    latency_ms      integer NOT NULL DEFAULT 0,
    feedback        smallint CHECK (feedback IN (-1, 1)),
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX interactions_user_recent ON interactions (household_id, user_id, created_at DESC);

CREATE TABLE experiments (
    name        text PRIMARY KEY,
    variants    jsonb NOT NULL,
    active      boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE experiment_results (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id    bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    interaction_id  bigint NOT NULL REFERENCES interactions ON DELETE CASCADE,
    experiment      text NOT NULL,
    variant         text NOT NULL,
    latency_ms      integer NOT NULL,
    rounds          integer NOT NULL,
    llm_calls       integer NOT NULL,
    tool_calls      integer NOT NULL,
    tokens          integer NOT NULL,
    feedback        smallint,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX experiment_results_variant ON experiment_results (experiment, variant, created_at);

CREATE TABLE media (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    kind          text NOT NULL,
    mime          text NOT NULL,
    data          bytea NOT NULL,
    source_inbox_id bigint REFERENCES inbox ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz
);

CREATE TABLE reminders (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id    bigint NOT NULL REFERENCES households ON DELETE CASCADE,
    created_by      bigint REFERENCES users ON DELETE SET NULL,
    recipient_ids   bigint[] NOT NULL,
    text            text NOT NULL,
    timezone        text NOT NULL,
    rrule           text,
    next_fire_at    timestamptz,
    last_fired_at   timestamptz,
    status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'done', 'cancelled')),
    source_inbox_id bigint REFERENCES inbox ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reminders_due ON reminders (next_fire_at) WHERE status = 'active';
