package sqlitestoretest_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxtest"
	"github.com/reliar/reliar/store/sqlitestore"
	"github.com/reliar/reliar/store/sqlitestore/sqlitestoretest"
)

// UserSignedUp is the example's message.
type UserSignedUp struct {
	Email string `json:"email"`
}

// MessageType names the message.
func (UserSignedUp) MessageType() string { return "user.signed_up" }

// SignUp is the code under test: it takes the outbox as an
// outbox.Enqueuer[*sql.Tx], which *sqlitestore.Store is.
func SignUp(ctx context.Context, out outbox.Enqueuer[*sql.Tx], tx *sql.Tx, tenant, email string) error {
	// ... INSERT INTO users ... in tx, then:
	_, err := out.Enqueue(ctx, tx, reliar.Msg(reliar.Envelope[UserSignedUp]{
		Body:     UserSignedUp{Email: email},
		Metadata: reliar.Metadata{TenantID: tenant},
	}))
	return err
}

// printT is a TB that prints failures; a test passes its *testing.T.
type printT struct{}

func (printT) Helper()                           {}
func (printT) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }
func (printT) FailNow()                          {}

// Assert inside the test's transaction what the code enqueued; a
// rolled-back transaction leaves nothing behind.
func ExampleRequireEnqueuedTx() {
	ctx := context.Background()
	var t outboxtest.TB = printT{} // in a test: t *testing.T
	dir, err := os.MkdirTemp("", "reliar-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlitestore.Open(filepath.Join(dir, "app.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := sqlitestore.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	store, err := sqlitestore.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := SignUp(ctx, store, tx, "acme", "ada@example.com"); err != nil {
		log.Fatal(err)
	}
	got := sqlitestoretest.RequireEnqueuedTx[UserSignedUp](ctx, t, store, tx, &outboxtest.RequireOpts{TenantID: "acme"})
	fmt.Println("enqueued", got.Body.Email, "for", got.Envelope.Metadata.TenantID)
	if err := tx.Rollback(); err != nil {
		log.Fatal(err)
	}

	after, err := db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer after.Rollback()
	sqlitestoretest.RequireNotEnqueuedTx[UserSignedUp](ctx, t, store, after, nil)
	fmt.Println("after the rollback: nothing")
	// Output:
	// enqueued ada@example.com for acme
	// after the rollback: nothing
}
