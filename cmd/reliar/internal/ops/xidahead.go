package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/reliar/reliar/store/pgstore"
)

// xidAheader is a store that finds rows ahead of the xid counter (pgstore).
type xidAheader interface {
	XIDAhead(ctx context.Context) (pgstore.XIDAhead, error)
}

// XIDAhead reads the pending rows whose transaction id the database has not
// reached (rows restored from another cluster) when store can tell
// (PostgreSQL); ok is false, and nothing is read, when it cannot.
func XIDAhead(ctx context.Context, store any) (x pgstore.XIDAhead, ok bool, err error) {
	s, can := store.(xidAheader)
	if !can {
		return pgstore.XIDAhead{}, false, nil
	}
	x, err = s.XIDAhead(ctx)
	if err != nil {
		return pgstore.XIDAhead{}, true, fmt.Errorf("find rows ahead of the xid counter: %w", err)
	}
	return x, true, nil
}

// XIDAheadDocument is the rows ahead of the xid counter in the stats
// documents.
type XIDAheadDocument struct {
	// Rows counts the pending rows whose xid is ahead of the counter.
	Rows int64 `json:"rows"`
	// Keys counts the ordering keys they block for per-key claims.
	Keys int64 `json:"keys"`
	// DueBlocked counts the due rows a per-key claim cannot take: those
	// rows and the later rows of their keys.
	DueBlocked int64 `json:"due_blocked"`
}

// NewXIDAheadDocument converts a store's XIDAhead.
func NewXIDAheadDocument(x pgstore.XIDAhead) *XIDAheadDocument {
	return &XIDAheadDocument{Rows: x.Rows, Keys: x.Keys, DueBlocked: x.BlockedDue}
}

// XIDAheadLines explain the rows ahead of the xid counter below the stats
// table: which claims they hold back, and the fix. Nothing when there are
// none.
func XIDAheadLines(x pgstore.XIDAhead) []string {
	if x.Rows == 0 {
		return nil
	}
	lines := []string{fmt.Sprintf("%d pending rows carry a transaction id ahead of this database's counter (restored from another cluster?), up to %d ids ahead:",
		x.Rows, x.MaxAhead)}
	if x.Keys == 0 {
		lines = append(lines, "they have no ordering key, so every claim takes them")
	} else {
		keys := strings.Join(quoteAll(x.Sample), ", ")
		if x.Keys > int64(len(x.Sample)) {
			keys += ", …"
		}
		lines = append(lines, fmt.Sprintf("a per-key claim (--ordering per-key) takes neither them nor the later rows of their %d keys (%s), so %d due rows wait; claims without per-key ordering take them",
			x.Keys, keys, x.BlockedDue))
	}
	return append(lines, "fix: reliar repair xids (gives them this database's transaction ids)")
}

// quoteAll labels each key as the tables label tenants.
func quoteAll(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = TenantLabel(k)
	}
	return out
}
