package outboxsql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/reliar/reliar"
)

// Queryer is a *sql.Tx, *sql.Conn or *sql.DB.
type Queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// ReadAll runs query, which selects the columns of RowColumns, on q and
// decodes every row it returns with c, in order: what the stores' test kits
// read from a user's transaction. A row that does not decode fails the
// whole read with an error naming its sequence.
func ReadAll[T any](ctx context.Context, q Queryer, query string, c TimeCodec[T]) ([]reliar.SerializedEnvelope, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return DecodeAll(rows, c)
}

// DecodeAll decodes every row of rows, which hold the columns of
// RowColumns, with c, in order; rows is any driver's cursor (pgx.Rows as
// well as *sql.Rows). The caller closes rows.
func DecodeAll[T any](rows interface {
	Scanner
	Next() bool
	Err() error
}, c TimeCodec[T]) ([]reliar.SerializedEnvelope, error) {
	var out []reliar.SerializedEnvelope
	for rows.Next() {
		var raw Raw[T]
		if err := raw.Scan(rows); err != nil {
			return nil, err
		}
		env, err := raw.Decode(c)
		if err != nil {
			return nil, fmt.Errorf("row of sequence %d: %w", raw.Sequence, err)
		}
		out = append(out, env)
	}
	return out, rows.Err()
}
