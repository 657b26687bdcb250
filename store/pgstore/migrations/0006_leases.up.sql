-- Reliar outbox, schema version 6: the table of leases.
--
-- {{schema}} stands for the quoted schema name; pgstore.Migrations renders
-- it. One row per lease; the only one today is 'maintenance', which makes
-- one maintainer at a time purge the outbox table of this schema. A lease
-- is a row, not a session advisory lock, so that it survives a transaction
-- pooler (which would leave a session lock held on a server connection it
-- lends to others) and expires on its own after its holder crashed: its
-- holder renews expires_at while it works and deletes the row when done;
-- another maintainer takes the row over once expires_at has passed. Every
-- time is the database's clock. This migration only adds a table:
-- releases before it keep their advisory lock, so during a rolling upgrade
-- an old and a new maintainer may purge at the same time, which is safe
-- (purges are idempotent), only redundant.

CREATE TABLE IF NOT EXISTS {{schema}}.reliar_leases (
    name       text        PRIMARY KEY,
    holder     uuid        NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT reliar_leases_name_ck CHECK (octet_length(name) BETWEEN 1 AND 100)
);

INSERT INTO {{schema}}.reliar_migrations (version, name) VALUES (6, 'leases');
