-- Reliar outbox table for SQLite.
--
-- Times are INTEGER microseconds since the Unix epoch, UTC: they sort and
-- compare as numbers, and every language can write them. Ids are UUIDs in
-- their canonical lower-case text form. Only id, message_type and payload are
-- required on insert, so any program can enqueue with a plain INSERT (its
-- created_at and available_at default to the database file's host clock).
CREATE TABLE outbox (
    sequence         INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT    NOT NULL UNIQUE
                     CHECK (length(id) = 36 AND id = lower(id)),
    message_type     TEXT    NOT NULL,
    message_version  INTEGER NOT NULL DEFAULT 1,
    correlation_id   TEXT,
    conversation_id  TEXT,
    causation_id     TEXT,
    request_id       TEXT,
    content_type     TEXT    NOT NULL DEFAULT 'application/json',
    payload          BLOB    NOT NULL,
    tenant_id        TEXT,
    expires_at       INTEGER,
    ordering_key     TEXT,
    metadata         TEXT,
    headers          TEXT,
    metadata_version INTEGER DEFAULT 1,
    created_at       INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS INTEGER)),
    available_at     INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS INTEGER)),
    attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    claim_count      INTEGER NOT NULL DEFAULT 0 CHECK (claim_count >= 0),
    lapsed_claims    INTEGER NOT NULL DEFAULT 0 CHECK (lapsed_claims >= 0),
    last_claimed_at  INTEGER,
    locked_by        TEXT,
    locked_until     INTEGER,
    lease_token      TEXT,
    published_at     INTEGER,
    dead_at          INTEGER,
    dead_reason      TEXT,
    last_error       TEXT,
    updated_at       INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS INTEGER)),
    CONSTRAINT ck_outbox_terminal CHECK (published_at IS NULL OR dead_at IS NULL),
    CONSTRAINT ck_outbox_dead_reason CHECK ((dead_at IS NULL) = (dead_reason IS NULL))
) STRICT;

-- Claims: due rows in (available_at, sequence) order.
CREATE INDEX ix_outbox_pending ON outbox (available_at, sequence)
    WHERE published_at IS NULL AND dead_at IS NULL;

-- Per-key ordering: the head row of each ordering key.
CREATE INDEX ix_outbox_ordering ON outbox (ordering_key, sequence)
    WHERE published_at IS NULL AND dead_at IS NULL AND ordering_key IS NOT NULL;

-- Dead letters, paged by sequence.
CREATE INDEX ix_outbox_dead ON outbox (sequence) WHERE dead_at IS NOT NULL;

-- Retention of published rows.
CREATE INDEX ix_outbox_published_at ON outbox (published_at) WHERE published_at IS NOT NULL;

-- Retention of dead rows.
CREATE INDEX ix_outbox_dead_at ON outbox (dead_at) WHERE dead_at IS NOT NULL;

-- The expiry sweep.
CREATE INDEX ix_outbox_expires_at ON outbox (expires_at)
    WHERE expires_at IS NOT NULL AND published_at IS NULL AND dead_at IS NULL;
