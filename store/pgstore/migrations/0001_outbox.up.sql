-- Reliar outbox, schema version 1.
--
-- {{schema}} stands for the quoted schema name and {{channel}} for the
-- notification channel as a string literal; pgstore.MigrationsFor renders
-- both. Only id, message_type and payload are required on insert, so any
-- language can enqueue with a plain INSERT. Every migration records its
-- version in reliar_migrations, whatever applies it, so that the store
-- can check the schema at start-up.

CREATE TABLE IF NOT EXISTS {{schema}}.reliar_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE {{schema}}.outbox (
    id               uuid        PRIMARY KEY,
    sequence         bigint      GENERATED ALWAYS AS IDENTITY,
    message_type     text        NOT NULL,
    message_version  integer     NOT NULL DEFAULT 1,
    correlation_id   text,
    conversation_id  uuid,
    causation_id     uuid,
    request_id       uuid,
    content_type     text        NOT NULL DEFAULT 'application/json',
    payload          bytea       NOT NULL,
    tenant_id        text,
    expires_at       timestamptz,
    ordering_key     text,
    metadata         jsonb,
    headers          jsonb,
    metadata_version integer     DEFAULT 1,
    xid              xid8        NOT NULL DEFAULT pg_current_xact_id(),
    created_at       timestamptz NOT NULL DEFAULT now(),
    available_at     timestamptz NOT NULL DEFAULT now(),
    attempts         integer     NOT NULL DEFAULT 0,
    claim_count      integer     NOT NULL DEFAULT 0,
    lapsed_claims    integer     NOT NULL DEFAULT 0,
    last_claimed_at  timestamptz,
    locked_by        text,
    locked_until     timestamptz,
    lease_token      uuid,
    published_at     timestamptz,
    dead_at          timestamptz,
    dead_reason      text,
    last_error       text,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT outbox_terminal_ck CHECK (published_at IS NULL OR dead_at IS NULL),
    CONSTRAINT outbox_dead_pair_ck CHECK ((dead_at IS NULL) = (dead_reason IS NULL)),
    CONSTRAINT outbox_dead_reason_ck CHECK (
        dead_reason IN ('permanent', 'max_attempts', 'max_claims', 'expired', 'undecodable'))
) WITH (
    fillfactor = 80,
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 0
);

-- The claim walks this index in (available_at, sequence) order.
CREATE INDEX outbox_pending_idx ON {{schema}}.outbox (available_at, sequence)
    WHERE published_at IS NULL AND dead_at IS NULL;

-- Per-key ordering finds a key's head row here.
CREATE INDEX outbox_pending_key_idx ON {{schema}}.outbox (ordering_key, sequence)
    WHERE published_at IS NULL AND dead_at IS NULL AND ordering_key IS NOT NULL;

-- Dead letters are listed by sequence.
CREATE INDEX outbox_dead_idx ON {{schema}}.outbox (sequence)
    WHERE dead_at IS NOT NULL;

-- Retention and expiry sweeps.
CREATE INDEX outbox_published_at_idx ON {{schema}}.outbox (published_at)
    WHERE published_at IS NOT NULL;
CREATE INDEX outbox_dead_at_idx ON {{schema}}.outbox (dead_at)
    WHERE dead_at IS NOT NULL;
CREATE INDEX outbox_expires_at_idx ON {{schema}}.outbox (expires_at)
    WHERE expires_at IS NOT NULL AND published_at IS NULL AND dead_at IS NULL;

-- Wakes dispatchers for producers that insert with plain SQL. The trigger is
-- not created here: enable it with pgstore.EnableNotifyTrigger, or with
--   CREATE TRIGGER reliar_outbox_notify AFTER INSERT ON <schema>.outbox
--       FOR EACH STATEMENT EXECUTE FUNCTION <schema>.reliar_outbox_notify();
CREATE FUNCTION {{schema}}.reliar_outbox_notify() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog
AS $$
BEGIN
    PERFORM pg_notify({{channel}}, '');
    RETURN NULL;
END
$$;

INSERT INTO {{schema}}.reliar_migrations (version, name) VALUES (1, 'outbox');
