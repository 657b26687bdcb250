-- Reliar outbox, schema version 4: the table refuses values that no claim
-- can read.
--
-- {{schema}} and {{table}} stand for the quoted schema and table names;
-- pgstore.Migrations renders them. Producers in other languages insert with
-- plain SQL, and a timestamptz column accepts 'infinity' and '-infinity',
-- which Go's time.Time cannot hold: one such row made every claim that met
-- it fail, and the healthy rows claimed with it went dead as max_claims
-- without being published. A message_version outside 1-65535 was published
-- as version 1, and counters below zero or at the top of integer broke the
-- claim or outcome write that incremented them. The checks below refuse
-- such values at insert.
--
-- The migration runs in three steps, each committed before the next begins
-- (pgstore.Migrate does so; an external tool should too, although the file
-- also works applied whole in one transaction, holding the table's lock
-- for the whole validation):
--   1. the checks are added NOT VALID: a change of the catalog under a
--      brief lock; from then on every insert and update is checked;
--   2. rows already stored with such values are repaired, last_error
--      saying what each held. A value with an equivalent finite one takes
--      it and the row stays as it was: available_at '-infinity' (due)
--      becomes now, expires_at 'infinity' (never) none, expires_at
--      '-infinity' (expired) now, a negative counter zero, a bookkeeping
--      time now or none. A pending row whose content has no equivalent
--      (an infinite created_at, available_at 'infinity', a message_version
--      outside 1-65535) goes dead as undecodable, its values replaced (now,
--      version 1) so that it can be listed and, by an operator, retried;
--   3. the checks are validated: a scan of the table that blocks neither
--      reads nor writes.
-- Every step can be run again, so a migration interrupted anywhere is
-- finished by the next run.

-- reliar:step
ALTER TABLE {{table}}
    DROP CONSTRAINT IF EXISTS outbox_times_finite_ck,
    ADD CONSTRAINT outbox_times_finite_ck CHECK (
        isfinite(created_at) AND isfinite(available_at) AND isfinite(updated_at)
        AND isfinite(expires_at) AND isfinite(last_claimed_at) AND isfinite(locked_until)
        AND isfinite(published_at) AND isfinite(dead_at)) NOT VALID,
    DROP CONSTRAINT IF EXISTS outbox_message_version_ck,
    ADD CONSTRAINT outbox_message_version_ck CHECK (message_version BETWEEN 1 AND 65535) NOT VALID,
    DROP CONSTRAINT IF EXISTS outbox_counters_ck,
    ADD CONSTRAINT outbox_counters_ck CHECK (attempts >= 0 AND claim_count >= 0 AND lapsed_claims >= 0) NOT VALID;

-- reliar:step
UPDATE {{table}} o SET
    dead_at = CASE WHEN b.kill OR NOT coalesce(isfinite(o.dead_at), true) THEN now() ELSE o.dead_at END,
    dead_reason = CASE WHEN b.kill THEN 'undecodable' ELSE o.dead_reason END,
    last_error = left(b.note || coalesce('; ' || o.last_error, ''), 2000),
    locked_by = CASE WHEN b.kill THEN NULL ELSE o.locked_by END,
    lease_token = CASE WHEN b.kill THEN NULL ELSE o.lease_token END,
    locked_until = CASE WHEN b.kill OR NOT coalesce(isfinite(o.locked_until), true) THEN NULL ELSE o.locked_until END,
    created_at = CASE WHEN isfinite(o.created_at) THEN o.created_at ELSE now() END,
    available_at = CASE WHEN isfinite(o.available_at) THEN o.available_at ELSE now() END,
    expires_at = CASE WHEN o.expires_at = '-infinity' THEN now() WHEN o.expires_at = 'infinity' THEN NULL ELSE o.expires_at END,
    last_claimed_at = CASE WHEN coalesce(isfinite(o.last_claimed_at), true) THEN o.last_claimed_at END,
    published_at = CASE WHEN coalesce(isfinite(o.published_at), true) THEN o.published_at ELSE now() END,
    message_version = CASE WHEN o.message_version BETWEEN 1 AND 65535 THEN o.message_version ELSE 1 END,
    attempts = greatest(o.attempts, 0),
    claim_count = greatest(o.claim_count, 0),
    lapsed_claims = greatest(o.lapsed_claims, 0),
    updated_at = now()
FROM (
    SELECT id,
        published_at IS NULL AND dead_at IS NULL AND (NOT isfinite(created_at)
            OR available_at = 'infinity' OR message_version NOT BETWEEN 1 AND 65535) AS kill,
        'schema version 4 found ' || concat_ws(', ',
            CASE WHEN NOT isfinite(created_at) THEN 'created_at ' || created_at END,
            CASE WHEN NOT isfinite(available_at) THEN 'available_at ' || available_at END,
            CASE WHEN NOT isfinite(updated_at) THEN 'updated_at ' || updated_at END,
            CASE WHEN NOT isfinite(expires_at) THEN 'expires_at ' || expires_at END,
            CASE WHEN NOT isfinite(last_claimed_at) THEN 'last_claimed_at ' || last_claimed_at END,
            CASE WHEN NOT isfinite(locked_until) THEN 'locked_until ' || locked_until END,
            CASE WHEN NOT isfinite(published_at) THEN 'published_at ' || published_at END,
            CASE WHEN NOT isfinite(dead_at) THEN 'dead_at ' || dead_at END,
            CASE WHEN message_version NOT BETWEEN 1 AND 65535 THEN 'message_version ' || message_version END,
            CASE WHEN attempts < 0 THEN 'attempts ' || attempts END,
            CASE WHEN claim_count < 0 THEN 'claim_count ' || claim_count END,
            CASE WHEN lapsed_claims < 0 THEN 'lapsed_claims ' || lapsed_claims END)
            || ', which no claim can read; replaced' AS note
    FROM {{table}}
    WHERE NOT (isfinite(created_at) AND isfinite(available_at) AND isfinite(updated_at)
        AND coalesce(isfinite(expires_at), true) AND coalesce(isfinite(last_claimed_at), true)
        AND coalesce(isfinite(locked_until), true) AND coalesce(isfinite(published_at), true)
        AND coalesce(isfinite(dead_at), true))
       OR message_version NOT BETWEEN 1 AND 65535
       OR attempts < 0 OR claim_count < 0 OR lapsed_claims < 0
) b
WHERE o.id = b.id;

-- reliar:step
ALTER TABLE {{table}} VALIDATE CONSTRAINT outbox_times_finite_ck;
ALTER TABLE {{table}} VALIDATE CONSTRAINT outbox_message_version_ck;
ALTER TABLE {{table}} VALIDATE CONSTRAINT outbox_counters_ck;
INSERT INTO {{schema}}.reliar_migrations (version, name) VALUES (4, 'outbox_readable_rows');
