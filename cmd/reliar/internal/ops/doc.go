// Package ops holds the logic of the operator commands (reliar stats, dead
// list|retry|purge, purge) that is independent of cobra: flag values for
// durations and points in time, the JSON documents and tables the commands
// print, and the bounded batch loops that retry, delete and purge rows
// through the outbox.Store and outbox.DeadLetters interfaces, so that they run
// on every store alike.
package ops
