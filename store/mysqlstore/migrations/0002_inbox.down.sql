-- Drops the Reliar inbox table: every consumer forgets what it processed.
DROP TABLE IF EXISTS processed_messages;
