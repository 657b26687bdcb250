-- Reverts schema version 5: fair claims lose their index.
DROP INDEX IF EXISTS {{schema}}.outbox_tenant_pending_idx;
DELETE FROM {{schema}}.reliar_migrations WHERE version = 5;
