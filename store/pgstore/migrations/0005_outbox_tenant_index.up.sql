-- Reliar outbox, schema version 5: the index of fair claims.
--
-- {{schema}} and {{table}} stand for the quoted schema and table names;
-- pgstore.Migrations renders them. A dispatcher with Fairness
-- FairnessTenant enumerates the tenants with pending rows through this
-- index, one index descent per tenant (PostgreSQL 15 has no skip scan),
-- and reads each tenant's first due rows from it. Rows without a tenant
-- are indexed under the empty string, so they form one tenant. An enqueue
-- pays one more index entry per row; published and dead rows leave it.
--
-- The index is built CONCURRENTLY, outside any transaction, so producers
-- and claims go on while it is built. A build that was interrupted leaves
-- an INVALID index behind, which pgstore.Migrate drops before it builds the
-- index again (an external tool: DROP INDEX CONCURRENTLY it by hand). Run
-- each step on its own (pgstore.Migrate does); goose users put the
-- no-transaction step in a file of its own with
-- "-- +goose NO TRANSACTION".

-- reliar:step no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_tenant_pending_idx
    ON {{table}} ((coalesce(tenant_id, '') COLLATE "C"), available_at, sequence)
    WHERE published_at IS NULL AND dead_at IS NULL;

-- reliar:step
INSERT INTO {{schema}}.reliar_migrations (version, name) VALUES (5, 'outbox_tenant_index');
