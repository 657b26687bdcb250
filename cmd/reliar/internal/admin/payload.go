package admin

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// PayloadDocument is the answer of GET /api/dead/{id}/payload?seq=N: one dead
// letter's payload, as text when it is valid UTF-8, else base64.
type PayloadDocument struct {
	ID          string `json:"id"`
	Sequence    int64  `json:"sequence"`
	MessageType string `json:"message_type"`
	ContentType string `json:"content_type"`
	// Size is the payload's length in bytes.
	Size int `json:"size"`
	// Encoding is "utf-8" or "base64".
	Encoding string `json:"encoding"`
	Payload  string `json:"payload"`
}

// newPayloadDocument converts a dead row's envelope.
func newPayloadDocument(env reliar.SerializedEnvelope) PayloadDocument {
	doc := PayloadDocument{
		ID:          env.ID.String(),
		Sequence:    env.Sequence,
		MessageType: env.MessageType,
		ContentType: env.ContentType,
		Size:        len(env.Payload),
		Encoding:    "utf-8",
		Payload:     string(env.Payload),
	}
	if !utf8.Valid(env.Payload) {
		doc.Encoding, doc.Payload = "base64", base64.StdEncoding.EncodeToString(env.Payload)
	}
	return doc
}

// findDead returns the dead letter id at sequence seq: a bounded read of one
// row through ListDead's cursor. found is false when no dead row has that id
// and sequence; poisoned holds the decode error of an undecodable one.
func (s *Server) findDead(ctx context.Context, id reliar.MessageID, seq int64) (rec outbox.DeadRecord, poisoned string, found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	page, err := s.cfg.Store.ListDead(ctx, outbox.DeadQuery{AfterSequence: seq - 1, Limit: 1})
	if err != nil {
		return outbox.DeadRecord{}, "", false, fmt.Errorf("read dead letter %s: %w", id, err)
	}
	for _, r := range page.Records {
		if r.Envelope.ID == id && r.Envelope.Sequence == seq {
			return r, "", true, nil
		}
	}
	for _, p := range page.Poisoned {
		if p.ID == id && p.Sequence == seq {
			return outbox.DeadRecord{}, p.Error, true, nil
		}
	}
	return outbox.DeadRecord{}, "", false, nil
}

// apiPayload serves GET /api/dead/{id}/payload?seq=N. The sequence, which
// every listing gives, makes the look-up one indexed row.
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
	rec, poisoned, found, err := s.findDead(r.Context(), id, seq)
	switch {
	case err != nil:
		s.log.Error("admin page", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	case !found:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no dead letter %s at sequence %d", id, seq))
		return
	case poisoned != "":
		writeError(w, http.StatusUnprocessableEntity, "the row cannot be decoded: "+poisoned)
		return
	}
	s.log.Info("admin payload viewed", "id", id.String(), "sequence", seq, "auth", c.how(), "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, newPayloadDocument(rec.Envelope))
}
