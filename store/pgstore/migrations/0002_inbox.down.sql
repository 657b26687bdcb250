-- Reverts schema version 2. Every consumer forgets what it processed.
DROP TABLE IF EXISTS {{schema}}.processed_messages;
DELETE FROM {{schema}}.reliar_migrations WHERE version = 2;
