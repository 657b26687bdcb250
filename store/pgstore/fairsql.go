package pgstore

import "strings"

// tenantKey is a row's tenant for fair claims: rows without a tenant form
// one tenant, the empty string. It is written exactly so in the index of
// schema version 5 (outbox_tenant_pending_idx) and in every statement that
// must use that index; the "C" collation orders tenants by their bytes, the
// cheapest comparison, and the same order memstore uses.
const tenantKey = `(coalesce(c.tenant_id, '') COLLATE "C")`

// fairClaimSQL is the claim under FairnessTenant. PostgreSQL 15 has no skip
// scan, so the tenants with pending rows are enumerated by a recursive CTE
// (ring) that jumps through outbox_tenant_pending_idx one tenant at a time:
// each step is one index descent to the first key above the last one. It
// starts after the cursor ($5), wraps around to the smallest key once past
// the largest, stops before it comes back past the cursor, and visits at
// most BatchSize ($1) tenants. For each visited tenant a LATERAL index scan
// locks (SKIP LOCKED) its first claimable rows in (available_at, sequence)
// order, at most its share (outboxdriver.TenantShare: twice an even share
// of the batch) and its budget under the per-tenant cap ($6, with the
// claimer's held rows per tenant in $7/$8). The rows are ranked round-robin
// — every tenant's first row, then every tenant's second — and the first
// BatchSize are leased exactly as the unfair claim leases them. So a claim
// visits at most BatchSize tenants and reads at most about twice BatchSize
// rows (plus the leased rows a tenant's scan steps over), whatever the
// backlog; it never scans the table.
//
// Each returned row also carries the last tenant the ring visited (the next
// claim's cursor) and whether a tenant's share, not its cap, left claimable
// rows behind (more). A claim that returns no row reads its cursor with
// fairCursorSQL, the same ring alone.
var fairClaimSQL = ringWith("$1", "$5::text") + `,
visited AS MATERIALIZED (
    SELECT r.t, r.n,
        CASE WHEN v.cnt <= 1 THEN $1::int4
             ELSE least($1::int4, greatest(1, (2 * $1::int4 + v.cnt - 1) / v.cnt)) END AS share,
        CASE WHEN $6::int4 <= 0 THEN $1::int4
             ELSE greatest(0, $6::int4 - coalesce(
                 (SELECT h.c FROM unnest($7::text[], $8::int4[]) AS h(t, c) WHERE (h.t COLLATE "C") = r.t), 0)) END AS budget
    FROM ring r CROSS JOIN (SELECT count(*)::int4 AS cnt FROM ring) v
),
picked AS MATERIALIZED (
    SELECT d.id, d.prev_claimed_at, d.reclaimed, d.exhausted, v.n AS pos, v.share, v.budget,
        least(v.share, v.budget) AS lim,
        row_number() OVER (PARTITION BY v.n ORDER BY d.available_at, d.sequence) AS rk
    FROM visited v CROSS JOIN LATERAL (
        SELECT c.id, c.available_at, c.sequence, c.last_claimed_at AS prev_claimed_at,
            (c.locked_until IS NOT NULL) AS reclaimed,
            (c.locked_until IS NOT NULL AND $4::int4 > 0 AND c.lapsed_claims >= $4::int4) AS exhausted
        FROM {{table}} c
        WHERE ` + tenantKey + ` = v.t
          AND c.published_at IS NULL AND c.dead_at IS NULL
          AND c.available_at <= now()
          AND (c.locked_until IS NULL OR c.locked_until <= now())
          AND (c.expires_at IS NULL OR c.expires_at > now())
        ORDER BY c.available_at, c.sequence
        LIMIT least(v.share, v.budget)
        FOR UPDATE SKIP LOCKED
    ) d
),
due AS MATERIALIZED (
    SELECT p.id, p.prev_claimed_at, p.reclaimed, p.exhausted
    FROM picked p ORDER BY p.rk, p.pos LIMIT $1
),
fair AS (
    SELECT (SELECT t FROM ring ORDER BY n DESC LIMIT 1) AS cursor,
        ((SELECT count(*) FROM picked) > $1
         OR EXISTS (SELECT 1 FROM picked p WHERE p.rk = p.lim AND p.lim = p.share AND p.share < p.budget)) AS more
)
` + claimUpdateSQL + `, fair.cursor, fair.more`

// fairRingSQL enumerates the tenants a fair claim visits, at most %BATCH%
// of them, from after %CURSOR%; see fairClaimSQL.
const fairRingSQL = `WITH RECURSIVE ring(t, wrapped, n) AS (
    SELECT x.t, x.w, 1 FROM (
        (SELECT ` + tenantKey + ` AS t, false AS w FROM {{table}} c
          WHERE c.published_at IS NULL AND c.dead_at IS NULL
            AND ` + tenantKey + ` > (%CURSOR% COLLATE "C")
          ORDER BY 1 LIMIT 1)
        UNION ALL
        (SELECT ` + tenantKey + `, true FROM {{table}} c
          WHERE c.published_at IS NULL AND c.dead_at IS NULL
          ORDER BY 1 LIMIT 1)
        LIMIT 1) x
  UNION ALL
    SELECT nx.t, nx.w, r.n + 1
    FROM ring r CROSS JOIN LATERAL (
        (SELECT ` + tenantKey + ` AS t, r.wrapped AS w FROM {{table}} c
          WHERE c.published_at IS NULL AND c.dead_at IS NULL
            AND ` + tenantKey + ` > r.t
          ORDER BY 1 LIMIT 1)
        UNION ALL
        (SELECT ` + tenantKey + `, true FROM {{table}} c
          WHERE NOT r.wrapped AND c.published_at IS NULL AND c.dead_at IS NULL
          ORDER BY 1 LIMIT 1)
        LIMIT 1) nx
    WHERE r.n < %BATCH% AND (NOT nx.w OR nx.t <= (%CURSOR% COLLATE "C"))
)`

// fairCursorSQL is the last tenant the ring of a fair claim visits, for a
// claim that returned no row: $1 batch size, $2 cursor.
var fairCursorSQL = ringWith("$1", "$2::text") + `
SELECT t FROM ring ORDER BY n DESC LIMIT 1`

// ringWith renders fairRingSQL with the placeholders of its batch size and
// cursor.
func ringWith(batch, cursor string) string {
	return strings.NewReplacer("%BATCH%", batch, "%CURSOR%", cursor).Replace(fairRingSQL)
}

// tenantStatsSQL lists the tenants with due rows, the oldest due row first.
// It reads every due row (an operator's look, not the dispatch path). $1 is
// the limit.
const tenantStatsSQL = `SELECT ` + tenantKey + ` AS t, count(*),
    (extract(epoch FROM now() - min(c.available_at)) * 1000000)::int8
FROM {{table}} c
WHERE c.published_at IS NULL AND c.dead_at IS NULL
  AND c.available_at <= now()
  AND (c.locked_until IS NULL OR c.locked_until <= now())
  AND (c.expires_at IS NULL OR c.expires_at > now())
GROUP BY 1
ORDER BY min(c.available_at), count(*) DESC, 1
LIMIT $1`
