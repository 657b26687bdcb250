-- Reliar outbox, schema version 3: pages of the outbox table are filled to
-- half at insert (was 80 %).
--
-- {{schema}} stands for the quoted schema name; pgstore.MigrationsFor renders
-- it. A claim rewrites every row it leases. When the new row version fits
-- on the same page and no indexed column changes, PostgreSQL updates it in
-- place (a heap-only tuple) and writes no index entry; at 80 % most claimed
-- rows did not fit and each claim inserted two index entries per row, which
-- later claims then had to step over. At 50 % about four claims in five
-- were heap-only updates (one in five at 80 %) and a claim of 512 rows took
-- about a quarter less time (BENCHMARKS.md, "Storage parameters"). The cost
-- is space: rows take up to twice the pages until vacuum and the purge free
-- them for new inserts. The setting applies to pages filled from now on;
-- nothing is rewritten, and the statement does not block reads or writes.
ALTER TABLE {{schema}}.outbox SET (fillfactor = 50);

INSERT INTO {{schema}}.reliar_migrations (version, name) VALUES (3, 'outbox_fillfactor');
