package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/internal/wire"
)

// httpError is an error with its own status and a message fit for the caller.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// Errors with fixed statuses.
var (
	errNoRoute      = &httpError{http.StatusNotFound, "The requested resource does not exist."}
	errUnauthorized = &httpError{http.StatusUnauthorized, "Credentials are missing or incorrect."}
	errBodyTooLarge = &httpError{http.StatusRequestEntityTooLarge, "The request body is too large."}
)

// The 404s of things that do not exist name what is missing, as the 409 of a deleted record does, so that a
// caller can tell a wrong id from a wrong path. idText is the id as the path gave it.

func recordNotFound(obj core.Object, idText string) error {
	return &httpError{http.StatusNotFound, "The record " + obj.WirePrefix() + clip(idText) + " does not exist."}
}

func viewNotFound(obj core.Object, idText string) error {
	return &httpError{http.StatusNotFound, "The view " + clip(idText) + " of " + obj.APIPrefix + " does not exist."}
}

func fieldNotFound(obj core.Object, idText string) error {
	return &httpError{http.StatusNotFound, "The field " + clip(idText) + " of " + obj.APIPrefix + " does not exist."}
}

// notWellFormed is the 415 of XML that does not parse.
func notWellFormed(detail string) error {
	return &httpError{http.StatusUnsupportedMediaType, "The XML sent is not well formed: " + detail}
}

// methodNotAllowed sets Allow and returns the 405 error.
func methodNotAllowed(w http.ResponseWriter, allow string) error {
	w.Header().Set("Allow", allow)
	return &httpError{http.StatusMethodNotAllowed, "Method not allowed; this resource allows " + allow + "."}
}

// writeError writes err as the <error><message> body of docs/api.md (Errors) with its status:
// core.ErrNotFound 404, core.ErrConflict 409, core.ErrInvalid (and *core.ValidationError, naming the
// field) 400, a deadline passed or a store out of reach 503 with Retry-After (core.ErrInDoubt: 504), anything
// else 500 "Internal error." with the detail only logged.
func (s *Server) writeError(w http.ResponseWriter, err error) {
	status, msg := http.StatusInternalServerError, "Internal error."
	var he *httpError
	var ve *core.ValidationError
	switch {
	case errors.As(err, &he):
		status, msg = he.status, he.msg
	case errors.As(err, &ve):
		status, msg = http.StatusBadRequest, "Invalid request: "+ve.Error()
	case errors.Is(err, core.ErrInvalid):
		status, msg = http.StatusBadRequest, "Invalid request: "+err.Error()
	case errors.Is(err, core.ErrNotFound):
		status, msg = http.StatusNotFound, "The requested resource does not exist."
	case errors.Is(err, core.ErrConflict):
		status, msg = http.StatusConflict, "The request conflicts with the current state of the resource."
	case errors.Is(err, core.ErrInDoubt):
		// As the gateway's own 504: the outcome of the write is open.
		status, msg = http.StatusGatewayTimeout, "The request's deadline passed while its write was being committed; it may have been applied."
	case errors.Is(err, core.ErrUnavailable):
		status, msg = http.StatusServiceUnavailable, "The store is unavailable; try again shortly."
		w.Header().Set("Retry-After", "1")
		s.log.Warn("core api: store unavailable", "err", err)
	case errors.Is(err, core.ErrExpired), errors.Is(err, context.DeadlineExceeded):
		// After the store's own refusals: a write that found its record missing says so, deadline or not. Every
		// write the core makes for a request is a store write: a deadline that ended anything else (a read, the
		// wait before the write) ended it before anything was applied.
		status, msg = http.StatusServiceUnavailable, "The request's deadline passed before it was applied; nothing was changed. Try again."
		w.Header().Set("Retry-After", "1")
	case isCanceled(err):
		status, msg = http.StatusServiceUnavailable, "The request was canceled."
	default:
		s.log.Error("core api: internal error", "err", err)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="reqgate"`)
	}
	writeXML(w, status, wire.ErrorXML(msg))
}

// writeXML writes an XML response body with its status.
func writeXML(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", wire.ContentTypeXML)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the caller is gone; nothing to do
}

// writeEmpty writes a response without a body (update, delete, create).
func writeEmpty(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(status)
}

// writeText writes a short plain-text body (health endpoints).
func writeText(w http.ResponseWriter, status int, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(text)))
	w.WriteHeader(status)
	w.Write([]byte(text)) //nolint:errcheck // the caller is gone; nothing to do
}
