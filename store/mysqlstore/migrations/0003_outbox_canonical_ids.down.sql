-- Reverts schema version 3: ids are stored as inserted again.
DROP TRIGGER IF EXISTS outbox_canonical_id;
