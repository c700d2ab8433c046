package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/core"
)

// Idempotency-Key (the IETF httpapi draft): a client that may retry a POST, PUT or DELETE sends a key of its
// choosing; the first time the write is applied, its outcome is kept under the account, the user and the key
// in the same transaction (core.Receipt), and a retry with the key gets that outcome again with nothing applied.
// A write that was refused (4xx) or failed applied nothing and keeps nothing, so its retry is checked again.

const headerIdempotencyKey = "Idempotency-Key"

// maxIdempotencyKey bounds a key: the draft leaves its length to the server, and UUIDs and ULIDs fit easily.
const maxIdempotencyKey = 255

// once prepares a write sent with an Idempotency-Key. A retry of a write applied already is answered here from
// its receipt (answered true); a key reused for another request is refused. Otherwise it returns the context
// the write runs under, which carries the receipt to keep (the unchanged context when no key was sent).
func (s *Server) once(w http.ResponseWriter, r *http.Request, c *call, status int, body []byte) (ctx context.Context, rc *core.Receipt, answered bool) {
	ctx = r.Context()
	raw, sent := r.Header[headerIdempotencyKey]
	if !sent {
		return ctx, nil, false
	}
	key, err := idempotencyKey(raw)
	if err != nil {
		s.writeError(w, err)
		return ctx, nil, true
	}
	rc = &core.Receipt{UserID: c.User.ID, Key: key, Fingerprint: fingerprint(r, body), Status: status,
		Time: s.now().Unix()}
	if s.replay(ctx, w, c, rc) {
		return ctx, nil, true
	}
	return core.WithReceipt(ctx, rc), rc, false
}

// replay answers a write from the receipt kept under its key, if there is one: the outcome of the first
// attempt, or 422 when the key was used for a different request.
func (s *Server) replay(ctx context.Context, w http.ResponseWriter, c *call, rc *core.Receipt) bool {
	kept, err := s.st.Receipt(ctx, c.Account.ID, rc.UserID, rc.Key, rc.Time)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return false
	case err != nil:
		s.writeError(w, err)
		return true
	case kept.Fingerprint != rc.Fingerprint:
		s.writeError(w, &httpError{http.StatusUnprocessableEntity, "The Idempotency-Key " + strconv.Quote(clip(rc.Key)) +
			" was sent with a different request; use a new key for a new request."})
		return true
	}
	w.Header().Set("Idempotent-Replayed", "true")
	if kept.RecordID != 0 {
		w.Header().Set("Location", c.Base+"/"+c.Parts[0]+"/"+strconv.FormatInt(kept.RecordID, 10))
	}
	writeEmpty(w, kept.Status)
	return true
}

// raced reports whether err is the loss of a race with another attempt of the write that kept its receipt
// first, and then answers as replay does: nothing of this attempt was applied.
func (s *Server) raced(ctx context.Context, w http.ResponseWriter, c *call, rc *core.Receipt, err error) bool {
	return rc != nil && errors.Is(err, core.ErrDuplicate) && s.replay(ctx, w, c, rc)
}

// idempotencyKey reads the header: one value, a structured-field string ("...") as the draft defines it, or the
// same characters unquoted as many clients send them; 1 to 255 visible ASCII characters.
func idempotencyKey(values []string) (string, error) {
	bad := func(reason string) error {
		return &httpError{http.StatusBadRequest, "Invalid request: Idempotency-Key: " + reason}
	}
	if len(values) != 1 {
		return "", bad("sent more than once")
	}
	k := strings.TrimSpace(values[0])
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		k = k[1 : len(k)-1]
	}
	if k == "" {
		return "", bad("empty")
	}
	if len(k) > maxIdempotencyKey {
		return "", bad("longer than 255 characters")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e || k[i] == '"' || k[i] == '\\' {
			return "", bad("only visible ASCII characters other than quotes and backslashes")
		}
	}
	return k, nil
}

// fingerprint identifies a request for its key: the method, the target and the body.
func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	h.Write([]byte(r.Method))
	h.Write([]byte{0})
	h.Write([]byte(r.URL.EscapedPath()))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
