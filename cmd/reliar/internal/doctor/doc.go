// Package doctor checks the health of a PostgreSQL outbox table and explains
// what it finds: the schema version, the indexes and whether the claim can
// use them, what pins the xmin horizon (old transactions, replication
// slots), dead tuples and bloat, leases that lapsed without a reclaim, how
// long due rows have waited, how fast rows go dead, and rows whose xid is
// ahead of the cluster's counter (they block per-key ordering).
//
// It works in two steps: Gather reads the facts from the database (Facts),
// and Evaluate turns them into checks, each with a verdict (ok, warn, red),
// what was found, why it matters and how to fix it. Evaluate is a pure
// function, tested without a database.
package doctor
