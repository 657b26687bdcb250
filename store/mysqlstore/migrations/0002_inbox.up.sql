-- Reliar inbox table for MariaDB >= 10.6 (and MySQL 8): one row per message
-- a consumer processed, written in the consumer's own transaction (see
-- Store.Inbox).
--
-- consumer is the consumer's name, 1 to 200 bytes compared byte for byte
-- (any printable bytes, so VARBINARY rather than a character set);
-- message_id the message's UUID in canonical lower-case text; processed_at
-- the server's UTC_TIMESTAMP(6) at the record. The primary key makes a second
-- record of the same message by the same consumer a duplicate-key error; the
-- processed_at index serves the retention purge.
CREATE TABLE IF NOT EXISTS processed_messages (
    consumer     VARBINARY(200) NOT NULL,
    message_id   CHAR(36)       CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    processed_at DATETIME(6)    NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    PRIMARY KEY (consumer, message_id),
    KEY ix_processed_messages_processed_at (processed_at)
) ENGINE = InnoDB;
