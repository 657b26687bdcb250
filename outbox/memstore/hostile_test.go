package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/storetest"
)

// memTarget writes hostile rows into a memstore through InsertRow, which
// takes what a row's columns hold: the columns memstore has no field for
// (claim_count, lapsed_claims) are left out, and values no Go field can
// hold are refused, as a table refuses them.
func memTarget(t *testing.T) storetest.HostileTarget {
	s := newMemStore()
	var ids []string
	return storetest.HostileTarget{
		Store: s,
		Insert: func(_ context.Context, hr storetest.HostileRow) error {
			r, err := memRow(hr)
			if err != nil {
				return err
			}
			if err := s.InsertRow(r); err != nil {
				return err
			}
			ids = append(ids, r.ID.String())
			return nil
		},
		Rows: func(context.Context) ([]storetest.FinalRow, error) {
			var out []storetest.FinalRow
			for _, id := range ids {
				st, ok := s.Inspect(uuid.MustParse(id))
				if !ok {
					continue
				}
				f := storetest.FinalRow{ID: id, Published: st.PublishedAt != nil, Leased: st.LeaseToken != nil}
				if st.DeadReason != nil {
					f.DeadReason = *st.DeadReason
				}
				f.Pending = st.PublishedAt == nil && st.DeadAt == nil
				out = append(out, f)
			}
			return out, nil
		},
	}
}

// memRow turns a hostile row's columns into an outboxdriver.Row.
func memRow(hr storetest.HostileRow) (outboxdriver.Row, error) {
	var r outboxdriver.Row
	for col, v := range hr.Columns {
		if v.SQL != "" {
			return r, fmt.Errorf("column %s: memstore cannot hold %s", col, v.SQL)
		}
		if v.Arg == nil {
			continue
		}
		var err error
		switch col {
		case "id":
			r.ID, err = uuid.Parse(v.Arg.(string))
		case "message_type":
			r.MessageType = v.Arg.(string)
		case "message_version":
			r.MessageVersion = v.Arg.(int)
			if r.MessageVersion == 0 {
				r.MessageVersion = -1 // an explicit 0, not the column's default
			}
		case "content_type":
			r.ContentType = v.Arg.(string)
		case "payload":
			r.Payload = v.Arg.([]byte)
		case "metadata":
			r.Metadata = []byte(v.Arg.(string))
		case "headers":
			r.Headers = []byte(v.Arg.(string))
		case "metadata_version":
			n := v.Arg.(int)
			r.MetadataVersion = &n
		case "correlation_id", "tenant_id", "ordering_key":
			s := v.Arg.(string)
			*map[string]**string{"correlation_id": &r.CorrelationID, "tenant_id": &r.TenantID, "ordering_key": &r.OrderingKey}[col] = &s
		case "conversation_id":
			var id uuid.UUID
			if id, err = uuid.Parse(v.Arg.(string)); err == nil {
				r.ConversationID = &id
			}
		case "expires_at", "available_at":
			tm := v.Arg.(time.Time)
			if col == "expires_at" {
				r.ExpiresAt = &tm
			} else {
				r.AvailableAt = &tm
			}
		case "created_at":
			r.CreatedAt = v.Arg.(time.Time)
		case "attempts":
			r.Attempts = v.Arg.(int)
		case "claim_count", "lapsed_claims":
			// no field: the row starts with none
		default:
			return r, errors.New("unknown column " + col)
		}
		if err != nil {
			return r, fmt.Errorf("column %s: %w", col, err)
		}
	}
	return r, nil
}

// The hostile rows that memstore can hold: the dispatcher publishes each
// good one exactly once and every row ends published or dead with a reason.
func TestHostileRows(t *testing.T) {
	seed := storetest.HostileSeed()
	t.Logf("seed %d (rerun with -storetest.seed=%d)", seed, seed)
	ht := memTarget(t)
	storetest.RunHostile(t, ht, storetest.HostileRows(rand.New(rand.NewPCG(seed, 1)), ht.AllEdges(), 150, time.Now()))
}
