-- Reverts schema version 1. Drops every message in the outbox.
DROP TABLE IF EXISTS {{schema}}.outbox;
DROP FUNCTION IF EXISTS {{schema}}.reliar_outbox_notify();
DELETE FROM {{schema}}.reliar_migrations WHERE version = 1;
