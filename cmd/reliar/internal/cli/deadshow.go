package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// deadShowJSON is the --json document of dead show.
type deadShowJSON struct {
	ID          string `json:"id"`
	Sequence    int64  `json:"sequence"`
	MessageType string `json:"message_type"`
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
	Shown       int    `json:"shown"`
	Cut         bool   `json:"cut"`
	// Encoding is "utf-8" or "base64".
	Encoding string `json:"encoding"`
	Payload  string `json:"payload"`
}

func newDeadShowCommand(app *App) *cobra.Command {
	var (
		db       dbFlags
		maxBytes int
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show the payload of one dead row, capped",
		Long: `show prints the payload of one dead row: at most --max-bytes of it (64 KiB by
default, 16 MiB at most), read capped by the store, so a huge payload costs no
more memory than that. dead list never reads payloads.

The payload is printed as text when it is UTF-8 without control characters (a
payload cannot drive the terminal), else in base64.

The last line on stdout is
  dead show: ID sequence=S type=T content_type=C size=N shown=M (cut|whole) encoding=utf-8|base64
With --json, one object: {"id","sequence","message_type","content_type","size",
"shown","cut","encoding","payload"}.

Exit status: 0; 1 when the id names no dead row (unknown, pending or published)
or the database fails; 2 on bad input.`,
		Example: `  reliar dead show --database-url postgres://app@db/orders 0190a4c2-7b1e-7cde-8f00-1234567890ab
  reliar dead show --database-url sqlite://orders.db --max-bytes 1048576 --json 0190a4c2-7b1e-7cde-8f00-1234567890ab`,
		Args: cobra.ExactArgs(1),
	}
	addDBFlags(cmd, &db, true)
	flagval.Int(cmd.Flags(), &maxBytes, "max-bytes", outboxdriver.DefaultDeadPayloadBytes, "most bytes of the payload to read and show", outboxdriver.MaxDeadPayloadBytes)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON document")

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		ids, err := ops.ParseIDs(cmd.Flags().Args())
		if err != nil {
			return exitcode.UsageError(err)
		}
		s, err := app.openOpsStore(ctx, db)
		if err != nil {
			return err
		}
		defer s.close(ctx)
		p, err := s.store.DeadPayload(ctx, ids[0], maxBytes)
		if errors.Is(err, outboxdriver.ErrNotDead) {
			return exitcode.FailureError(fmt.Errorf("%s is not a dead row (unknown, pending or published)", ids[0]))
		}
		if err != nil {
			return err
		}
		doc := showDocument(p)
		out := app.Printer(cmd, asJSON)
		if asJSON {
			return out.Document(doc)
		}
		if err := out.Line("%s", doc.Payload); err != nil {
			return err
		}
		whole := "whole"
		if doc.Cut {
			whole = "cut"
		}
		return out.Final("dead show: %s sequence=%d type=%s content_type=%s size=%d shown=%d %s encoding=%s",
			doc.ID, doc.Sequence, doc.MessageType, doc.ContentType, doc.Size, doc.Shown, whole, doc.Encoding)
	})
	return cmd
}

// showDocument lays out a payload for a terminal: text when it is UTF-8
// without control characters other than tab and newline (a partial
// character at a cut dropped), else base64.
func showDocument(p outboxdriver.DeadPayload) deadShowJSON {
	doc := deadShowJSON{ID: p.ID.String(), Sequence: p.Sequence, MessageType: p.MessageType, ContentType: p.ContentType,
		Size: p.Size, Cut: p.Cut, Encoding: "utf-8"}
	b := p.Payload
	if p.Cut {
		b = ops.TrimPartialRune(b)
	}
	if printable(b) {
		doc.Payload, doc.Shown = string(b), len(b)
		return doc
	}
	doc.Encoding, doc.Payload, doc.Shown = "base64", base64.StdEncoding.EncodeToString(p.Payload), len(p.Payload)
	return doc
}

// printable reports whether b is UTF-8 text a terminal shows as it is.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == utf8.RuneError) {
			return false
		}
	}
	return true
}
