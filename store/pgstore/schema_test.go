package pgstore

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		valid bool
	}{
		{"public", true},
		{"_private", true},
		{"Tenant_42", true},
		{strings.Repeat("a", 63), true},
		{"", false},
		{`x"; drop table y; --`, false},
		{"two words", false},
		{strings.Repeat("a", 64), false},
		{"1starts_with_digit", false},
		{"dash-ed", false},
		{"dotted.name", false},
		{"ünïcode", false},
	}
	for _, tt := range tests {
		err := ValidateSchema(tt.name)
		if (err == nil) != tt.valid {
			t.Errorf("ValidateSchema(%q) = %v, want valid %v", tt.name, err, tt.valid)
		}
		var ise *InvalidSchemaError
		if err != nil && (!errors.Is(err, ErrInvalidSchema) || !errors.As(err, &ise) || ise.Name != tt.name) {
			t.Errorf("ValidateSchema(%q) = %v, want an *InvalidSchemaError matching ErrInvalidSchema", tt.name, err)
		}
	}
}

// Every entry point that takes a schema refuses an injection attempt before
// sending anything.
func TestEntryPointsRefuseBadSchemas(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, bad := range []string{`x"; drop table y; --`, "a b", strings.Repeat("s", 64)} {
		calls := map[string]error{
			"Migrate":              Migrate(ctx, sharedPool, WithSchema(bad)),
			"EnableNotifyTrigger":  EnableNotifyTrigger(ctx, sharedPool, WithSchema(bad)),
			"DisableNotifyTrigger": DisableNotifyTrigger(ctx, sharedPool, WithSchema(bad)),
		}
		_, calls["Migrations"] = Migrations(WithSchema(bad))
		_, calls["New"] = New(ctx, sharedPool, WithSchema(bad))
		for name, err := range calls {
			if !errors.Is(err, ErrInvalidSchema) {
				t.Errorf("%s(%q) = %v, want ErrInvalidSchema", name, bad, err)
			}
		}
	}
}

func TestChannelNameFitsIdentifierLimit(t *testing.T) {
	t.Parallel()
	short, long := channelName("public"), channelName(strings.Repeat("x", 63))
	if short != "reliar.public.outbox" {
		t.Errorf("channelName(public) = %q", short)
	}
	if len(long) > maxIdentifierBytes || long == channelName(strings.Repeat("y", 63)) {
		t.Errorf("channelName of a long schema = %q: too long or not distinct", long)
	}
}
