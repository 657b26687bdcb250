-- Drops the Reliar outbox table, its indexes and every message in it.
DROP TABLE IF EXISTS outbox;
