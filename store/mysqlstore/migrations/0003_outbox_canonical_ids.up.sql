-- Reliar outbox, schema version 3: ids are stored in their canonical form.
--
-- Outcome writes match a row by its id as Go prints a UUID: lower case, with
-- hyphens. The id column compares bytes (ascii_bin), so a row that another
-- program inserted with an upper-case id (as some languages and databases
-- print UUIDs) or without hyphens was claimed and published, but its
-- Complete matched nothing: it was published again at every lease and
-- finally dead-lettered. Comparing LOWER(id) in the outcome statements would
-- defeat the unique index, so the id is normalised once, at insert, by the
-- trigger below. Ids in any other form are claimed as poison (dead,
-- undecodable), never handed out.
--
-- Nothing here rebuilds or locks the table: MariaDB adds a CHECK constraint
-- only by copying the table, which blocks writes for the copy's length, but
-- a trigger is a change of metadata. With binary logging on, creating a
-- trigger needs the SUPER privilege or log_bin_trust_function_creators = 1.
CREATE TRIGGER IF NOT EXISTS outbox_canonical_id BEFORE INSERT ON outbox FOR EACH ROW SET NEW.id = LOWER(CASE WHEN CHAR_LENGTH(NEW.id) = 32 THEN CONCAT_WS('-', SUBSTRING(NEW.id, 1, 8), SUBSTRING(NEW.id, 9, 4), SUBSTRING(NEW.id, 13, 4), SUBSTRING(NEW.id, 17, 4), SUBSTRING(NEW.id, 21, 12)) ELSE NEW.id END);

-- Rows already stored in upper case are normalised: pending rows through
-- the pending index, dead ones through the dead index, each statement in
-- READ COMMITTED so that it locks only the rows it changes. A row whose
-- lower-case id already exists keeps its id (IGNORE) and is claimed as
-- poison.
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
UPDATE IGNORE outbox SET id = LOWER(id) WHERE pending_available_at IS NOT NULL AND id <> LOWER(id);
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
UPDATE IGNORE outbox SET id = LOWER(id) WHERE is_dead = 1 AND id <> LOWER(id);
