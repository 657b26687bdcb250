package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
)

// OrderPlaced is the message the simulated orders service publishes for
// every order it commits.
type OrderPlaced struct {
	OrderID     string `json:"order_id"`
	Customer    string `json:"customer"`
	AmountCents int64  `json:"amount_cents"`
}

// MessageType names the message: "orders.placed".
func (OrderPlaced) MessageType() string { return "orders.placed" }

// RollbackEvery is n: every n-th order transaction is rolled back on purpose.
const RollbackEvery = 10

// transactionsFor returns how many transactions commit exactly committed
// orders when every RollbackEvery-th one is rolled back.
func transactionsFor(committed int) int {
	if committed <= 0 {
		return 0
	}
	return committed + (committed-1)/(RollbackEvery-1)
}

// commit is one committed order: its message id and when its transaction
// committed.
type commit struct {
	id reliar.MessageID
	at time.Time
}

// orders simulates an orders service: each transaction inserts one order
// row and enqueues its OrderPlaced message, then commits, except every
// RollbackEvery-th transaction, which is rolled back.
type orders struct {
	backend storeurl.Backend
	insert  string
	total   int
	next    atomic.Int64

	mu         sync.Mutex
	commits    []commit
	rolledBack []reliar.MessageID
}

// setupOrders creates the orders table.
func setupOrders(ctx context.Context, b storeurl.Backend, transactions int) (*orders, error) {
	d := b.Dialect()
	table := d.Table("orders")
	tx, err := b.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if err := tx.Exec(ctx, `CREATE TABLE `+table+` (
		id           VARCHAR(36) PRIMARY KEY,
		customer     VARCHAR(64) NOT NULL,
		amount_cents BIGINT      NOT NULL
	)`); err != nil {
		return nil, fmt.Errorf("create the orders table: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("create the orders table: %w", err)
	}
	return &orders{
		backend: b,
		insert:  fmt.Sprintf(`INSERT INTO %s (id, customer, amount_cents) VALUES (%s, %s, %s)`, table, d.Bind(1), d.Bind(2), d.Bind(3)),
		total:   transactions,
		commits: make([]commit, 0, transactions),
	}, nil
}

// run places orders from workers goroutines until every transaction ran.
// It returns the first error; the other workers stop at their next order.
func (o *orders) run(ctx context.Context, workers int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			if err := o.work(ctx); err != nil {
				errs <- err
				cancel()
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// work places orders until none are left.
func (o *orders) work(ctx context.Context) error {
	for {
		n := int(o.next.Add(1))
		if n > o.total {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := o.place(ctx, n%RollbackEvery != 0); err != nil {
			return fmt.Errorf("order transaction %d: %w", n, err)
		}
	}
}

// place runs one transaction: the order row and its message, committed or
// rolled back.
func (o *orders) place(ctx context.Context, keep bool) error {
	id := reliar.NewMessageID()
	body := OrderPlaced{
		OrderID:     id.String(),
		Customer:    fmt.Sprintf("customer-%03d", rand.IntN(1000)),
		AmountCents: 100 + rand.Int64N(99900),
	}
	msg := reliar.NewMsg(body)
	msg.ID = id
	tx, err := o.backend.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := tx.Exec(ctx, o.insert, body.OrderID, body.Customer, body.AmountCents); err != nil {
		return fmt.Errorf("insert order: %w", err)
	}
	if _, err := tx.Enqueue(ctx, msg); err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	if !keep {
		if err := tx.Rollback(ctx); err != nil {
			return fmt.Errorf("rollback: %w", err)
		}
		o.mu.Lock()
		o.rolledBack = append(o.rolledBack, id)
		o.mu.Unlock()
		return nil
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	at := time.Now()
	o.mu.Lock()
	o.commits = append(o.commits, commit{id: id, at: at})
	o.mu.Unlock()
	return nil
}

// results returns the committed orders and the rolled-back message ids.
func (o *orders) results() ([]commit, []reliar.MessageID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]commit(nil), o.commits...), append([]reliar.MessageID(nil), o.rolledBack...)
}
