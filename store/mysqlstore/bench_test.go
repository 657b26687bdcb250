package mysqlstore_test

import "testing"

// BenchmarkEnqueueBatch100 commits 100 messages per transaction.
func BenchmarkEnqueueBatch100(b *testing.B) { target.BenchmarkEnqueue(b, 100) }

// BenchmarkClaimComplete claims a batch of 100 due rows and completes them,
// on a table that also holds the published rows of the earlier iterations.
func BenchmarkClaimComplete(b *testing.B) { target.BenchmarkClaimComplete(b) }
