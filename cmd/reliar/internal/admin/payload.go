package admin

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// payloadShown is how much of a payload the page shows unless max_bytes
// says otherwise: the store's default cap.
const payloadShown = outboxdriver.DefaultDeadPayloadBytes

// PayloadDocument is the answer of GET /api/dead/{id}/payload?seq=N: the
// first bytes of one dead letter's payload (at most max_bytes, 64 KiB by
// default, 16 MiB at most), as text when they are valid UTF-8, else base64.
type PayloadDocument struct {
	ID          string `json:"id"`
	Sequence    int64  `json:"sequence"`
	MessageType string `json:"message_type"`
	ContentType string `json:"content_type"`
	// Size is the whole payload's length in bytes.
	Size int `json:"size"`
	// Shown is how many of its bytes Payload holds.
	Shown int `json:"shown"`
	// Cut says that Payload is the payload's beginning only.
	Cut bool `json:"cut"`
	// Encoding is "utf-8" or "base64".
	Encoding string `json:"encoding"`
	Payload  string `json:"payload"`
}

// newPayloadDocument converts what the store read of a dead payload. A cut
// that split a UTF-8 character leaves the text valid: the partial character
// is dropped from what is shown.
func newPayloadDocument(p outboxdriver.DeadPayload) PayloadDocument {
	doc := PayloadDocument{
		ID:          p.ID.String(),
		Sequence:    p.Sequence,
		MessageType: p.MessageType,
		ContentType: p.ContentType,
		Size:        p.Size,
		Cut:         p.Cut,
		Encoding:    "utf-8",
	}
	b := p.Payload
	if p.Cut {
		b = ops.TrimPartialRune(b)
	}
	if !utf8.Valid(b) {
		b = p.Payload
		doc.Encoding, doc.Payload = "base64", base64.StdEncoding.EncodeToString(b)
	} else {
		doc.Payload = string(b)
	}
	doc.Shown = len(b)
	return doc
}

// readPayload reads at most max bytes of the dead letter id at sequence seq
// through the store's capped read. found is false when no dead row has that
// id and sequence.
func (s *Server) readPayload(ctx context.Context, id reliar.MessageID, seq int64, max int) (p outboxdriver.DeadPayload, found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	p, err = s.cfg.Store.DeadPayload(ctx, id, max)
	switch {
	case errors.Is(err, outboxdriver.ErrNotDead):
		return p, false, nil
	case err != nil:
		return p, false, fmt.Errorf("read dead letter %s: %w", id, err)
	}
	return p, p.Sequence == seq, nil
}

// apiPayload serves GET /api/dead/{id}/payload?seq=N[&max_bytes=B]. The
// sequence, which every listing gives, must match: a link to a row that
// was purged and whose id came back is not followed.
func (s *Server) apiPayload(w http.ResponseWriter, r *http.Request, c caller) {
	id, err := reliar.ParseMessageID(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%q is not a message id", r.PathValue("id")))
		return
	}
	seq, err := strconv.ParseInt(r.URL.Query().Get("seq"), 10, 64)
	if err != nil || seq < 1 {
		writeError(w, http.StatusBadRequest, "seq must be the dead letter's sequence number, as listed by /api/dead")
		return
	}
	max := payloadShown
	if v := r.URL.Query().Get("max_bytes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > outboxdriver.MaxDeadPayloadBytes {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("max_bytes must be a number of bytes from 0 (the default, %d) to %d", payloadShown, outboxdriver.MaxDeadPayloadBytes))
			return
		}
		max = n
	}
	p, found, err := s.readPayload(r.Context(), id, seq, max)
	switch {
	case err != nil:
		s.log.Error("admin page", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	case !found:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no dead letter %s at sequence %d", id, seq))
		return
	}
	s.log.Info("admin payload viewed", "id", id.String(), "sequence", seq, "size", p.Size, "shown", len(p.Payload), "auth", c.how(), "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, newPayloadDocument(p))
}
