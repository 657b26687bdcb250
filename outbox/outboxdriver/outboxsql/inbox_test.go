package outboxsql

import (
	"strings"
	"testing"

	"github.com/reliar/reliar"
)

func TestCheckMark(t *testing.T) {
	tests := []struct {
		name     string
		consumer string
		id       reliar.MessageID
		ok       bool
	}{
		{"valid", "billing", reliar.NewMessageID(), true},
		{"longest consumer", strings.Repeat("c", 200), reliar.NewMessageID(), true},
		{"empty consumer", "", reliar.NewMessageID(), false},
		{"control byte", "bill\ning", reliar.NewMessageID(), false},
		{"consumer too long", strings.Repeat("c", 201), reliar.NewMessageID(), false},
		{"nil message id", "billing", reliar.MessageID{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := CheckMark(tt.consumer, tt.id); (err == nil) != tt.ok {
				t.Fatalf("CheckMark(%q, %v) = %v, want ok %v", tt.consumer, tt.id, err, tt.ok)
			}
		})
	}
}
