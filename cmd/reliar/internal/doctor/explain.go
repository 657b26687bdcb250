package doctor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// explain runs EXPLAIN (FORMAT JSON) on query in tx and returns the indexes
// its plan reads and whether it scans the outbox table sequentially.
func explain(ctx context.Context, tx pgx.Tx, query string) (Plan, error) {
	var raw []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+query).Scan(&raw); err != nil {
		return Plan{}, fmt.Errorf("explain: %w", err)
	}
	return parsePlan(raw)
}

// planNode is the part of an EXPLAIN (FORMAT JSON) node doctor reads.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	Plans        []planNode `json:"Plans"`
}

// parsePlan reads the output of EXPLAIN (FORMAT JSON).
func parsePlan(raw []byte) (Plan, error) {
	var doc []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Plan{}, fmt.Errorf("explain: read plan: %w", err)
	}
	if len(doc) == 0 {
		return Plan{}, errNoPlan
	}
	var p Plan
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.IndexName != "" && !p.uses(n.IndexName) {
			p.Indexes = append(p.Indexes, n.IndexName)
		}
		if n.NodeType == "Seq Scan" && n.RelationName == "outbox" {
			p.SeqScan = true
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(doc[0].Plan)
	return p, nil
}
