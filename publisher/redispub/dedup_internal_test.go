package redispub

import "testing"

func TestDedupWindowIsZero(t *testing.T) {
	if w := (&Publisher{}).DedupWindow(); w != 0 {
		t.Fatalf("DedupWindow = %v, want 0: the broker does not deduplicate by message id", w)
	}
}
