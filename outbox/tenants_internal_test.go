package outbox

import (
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestInterleaveTenants(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"a", "a"},
		{"aaaa", "aaaa"},
		{"aaaab", "abaaa"},
		{"aabbc", "abcab"},
		{"bbaa-", "ba-ba"},
	}
	for _, tt := range tests {
		var recs []outboxdriver.Record
		for i, c := range tt.in {
			tenant := string(c)
			if c == '-' {
				tenant = ""
			}
			recs = append(recs, outboxdriver.Record{Envelope: reliar.SerializedEnvelope{Sequence: int64(i), Metadata: reliar.Metadata{TenantID: tenant}}})
		}
		interleaveTenants(recs)
		var got strings.Builder
		last := map[string]int64{}
		for _, r := range recs {
			tenant := r.Envelope.Metadata.TenantID
			if prev, ok := last[tenant]; ok && prev > r.Envelope.Sequence {
				t.Errorf("%q: tenant %q's records out of claim order", tt.in, tenant)
			}
			last[tenant] = r.Envelope.Sequence
			if tenant == "" {
				tenant = "-"
			}
			got.WriteString(tenant)
		}
		if got.String() != tt.want {
			t.Errorf("interleave %q = %q, want %q", tt.in, got.String(), tt.want)
		}
	}
}
