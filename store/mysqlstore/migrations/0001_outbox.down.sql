-- Drops the Reliar outbox table and every message in it.
DROP TABLE IF EXISTS outbox;
