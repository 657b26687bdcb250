-- Reverts schema version 4: the table accepts unreadable values again.
ALTER TABLE {{table}}
    DROP CONSTRAINT IF EXISTS outbox_times_finite_ck,
    DROP CONSTRAINT IF EXISTS outbox_message_version_ck,
    DROP CONSTRAINT IF EXISTS outbox_counters_ck;
DELETE FROM {{schema}}.reliar_migrations WHERE version = 4;
