-- Reliar inbox, schema version 2: one row per message a consumer processed,
-- written in the consumer's own transaction (see Store.Inbox).
--
-- {{schema}} stands for the quoted schema name; pgstore.MigrationsFor renders
-- it. This migration only adds a table: it changes nothing that release 1
-- reads or writes, so instances of both releases can run side by side.
--
-- The primary key makes a second record of the same message by the same
-- consumer a conflict: INSERT ... ON CONFLICT DO NOTHING then inserts no
-- row, and an inserter racing an uncommitted record waits for its
-- transaction to end. Rows are inserted and later deleted by the retention
-- purge, never updated, so the default fillfactor fits; vacuum runs early,
-- after deletes and after inserts, to keep the table and its indexes small.

CREATE TABLE {{schema}}.processed_messages (
    consumer     text        NOT NULL,
    message_id   uuid        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT processed_messages_pkey PRIMARY KEY (consumer, message_id),
    CONSTRAINT processed_messages_consumer_ck CHECK (octet_length(consumer) BETWEEN 1 AND 200)
) WITH (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 0
);

-- The retention purge walks this index, oldest records first.
CREATE INDEX processed_messages_processed_at_idx
    ON {{schema}}.processed_messages (processed_at);

INSERT INTO {{schema}}.reliar_migrations (version, name) VALUES (2, 'inbox');
