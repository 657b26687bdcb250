-- Reverts schema version 3: pages are filled to 80 % again.
ALTER TABLE {{schema}}.outbox SET (fillfactor = 80);
DELETE FROM {{schema}}.reliar_migrations WHERE version = 3;
