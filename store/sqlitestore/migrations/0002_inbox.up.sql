-- Reliar inbox table for SQLite: one row per message a consumer processed,
-- written in the consumer's own transaction (see Store.Inbox).
--
-- consumer is the consumer's name (1 to 200 bytes), message_id the message's
-- UUID in canonical lower-case text, processed_at INTEGER microseconds since
-- the Unix epoch (UTC), as in the outbox table. The primary key makes a
-- second record of the same message by the same consumer a conflict; the
-- processed_at index serves the retention purge.
CREATE TABLE processed_messages (
    consumer     TEXT    NOT NULL CHECK (length(CAST(consumer AS BLOB)) BETWEEN 1 AND 200),
    message_id   TEXT    NOT NULL CHECK (length(message_id) = 36 AND message_id = lower(message_id)),
    processed_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS INTEGER)),
    PRIMARY KEY (consumer, message_id)
) STRICT, WITHOUT ROWID;

-- The retention purge: the oldest records first.
CREATE INDEX ix_processed_messages_processed_at ON processed_messages (processed_at);
