package sqlitestore_test

import "testing"

// BenchmarkEnqueue commits one message per transaction.
func BenchmarkEnqueue(b *testing.B) { target.BenchmarkEnqueue(b, 1) }

// BenchmarkEnqueueBatch100 commits 100 messages per transaction.
func BenchmarkEnqueueBatch100(b *testing.B) { target.BenchmarkEnqueue(b, 100) }

// BenchmarkClaimComplete claims a batch of 100 due rows and completes them,
// on a table that also holds the published rows of the earlier iterations.
func BenchmarkClaimComplete(b *testing.B) { target.BenchmarkClaimComplete(b) }
