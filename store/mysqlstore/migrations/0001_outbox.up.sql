-- Reliar outbox table for MariaDB >= 10.6 (and MySQL 8).
--
-- Times are DATETIME(6) in UTC, written from the server's UTC_TIMESTAMP(6).
-- Ids, conversation, causation and request ids and lease tokens are UUIDs in
-- their canonical lower-case text form. Only id, message_type and payload are
-- required on insert, so any program can enqueue with a plain INSERT.
--
-- MariaDB has no partial indexes; the generated pending_* columns hold a
-- value only while the row is pending (NULL once published or dead), so
-- their indexes cover the pending rows alone, as partial indexes would.
CREATE TABLE IF NOT EXISTS outbox (
    sequence             BIGINT       NOT NULL AUTO_INCREMENT,
    id                   CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    message_type         VARCHAR(255) NOT NULL,
    message_version      INT          NOT NULL DEFAULT 1,
    correlation_id       VARCHAR(255) NULL,
    conversation_id      CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NULL,
    causation_id         CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NULL,
    request_id           CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NULL,
    content_type         VARCHAR(255) NOT NULL DEFAULT 'application/json',
    payload              LONGBLOB     NOT NULL,
    tenant_id            VARCHAR(255) NULL,
    expires_at           DATETIME(6)  NULL,
    ordering_key         VARCHAR(255) NULL,
    metadata             LONGTEXT     NULL,
    headers              LONGTEXT     NULL,
    metadata_version     INT          NULL DEFAULT 1,
    created_at           DATETIME(6)  NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    available_at         DATETIME(6)  NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    attempts             INT          NOT NULL DEFAULT 0,
    claim_count          INT          NOT NULL DEFAULT 0,
    lapsed_claims        INT          NOT NULL DEFAULT 0,
    last_claimed_at      DATETIME(6)  NULL,
    locked_by            VARCHAR(255) NULL,
    locked_until         DATETIME(6)  NULL,
    lease_token          CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NULL,
    published_at         DATETIME(6)  NULL,
    dead_at              DATETIME(6)  NULL,
    dead_reason          VARCHAR(32)  NULL,
    last_error           TEXT         NULL,
    updated_at           DATETIME(6)  NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    pending_available_at DATETIME(6)  AS (CASE WHEN published_at IS NULL AND dead_at IS NULL THEN available_at END) STORED,
    pending_ordering_key VARCHAR(255) AS (CASE WHEN published_at IS NULL AND dead_at IS NULL THEN ordering_key END) STORED,
    pending_expires_at   DATETIME(6)  AS (CASE WHEN published_at IS NULL AND dead_at IS NULL THEN expires_at END) STORED,
    is_dead              BOOLEAN      AS (dead_at IS NOT NULL) STORED,
    PRIMARY KEY (sequence),
    UNIQUE KEY ux_outbox_id (id),
    KEY ix_outbox_pending (pending_available_at, sequence),
    KEY ix_outbox_ordering (pending_ordering_key, sequence),
    KEY ix_outbox_dead (is_dead, sequence),
    KEY ix_outbox_published_at (published_at),
    KEY ix_outbox_dead_at (dead_at),
    KEY ix_outbox_expires_at (pending_expires_at),
    CONSTRAINT ck_outbox_terminal CHECK (published_at IS NULL OR dead_at IS NULL),
    CONSTRAINT ck_outbox_dead_reason CHECK ((dead_at IS NULL) = (dead_reason IS NULL))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
