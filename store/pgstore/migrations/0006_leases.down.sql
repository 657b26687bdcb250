-- Reverts schema version 6: the leases table goes.
DROP TABLE IF EXISTS {{schema}}.reliar_leases;
DELETE FROM {{schema}}.reliar_migrations WHERE version = 6;
