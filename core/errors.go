package core

import (
	"errors"
	"strconv"
)

// Errors a Store returns, matched with errors.Is. The HTTP layer maps them to statuses.
var (
	ErrNotFound = errors.New("not found")            // 404
	ErrConflict = errors.New("conflicts with state") // 409: e.g. deleting a deleted record
	ErrInvalid  = errors.New("invalid")              // 400: see *ValidationError for the detail
	// ErrUnavailable: the store cannot be reached or is restarting (503 with Retry-After). A write that failed
	// with it was not applied, unless the connection broke while its commit was under way, which no engine
	// can tell: a client that must know retries with its Idempotency-Key.
	ErrUnavailable = errors.New("store unavailable")
	// ErrExpired is a write refused because its context's deadline passed before it committed: it was rolled
	// back, nothing of it applied (503).
	ErrExpired = errors.New("deadline passed before the write was applied")
	// ErrInDoubt is a write whose commit failed once its context's deadline had passed: the commit may have
	// been applied (504, as a gateway timeout).
	ErrInDoubt = errors.New("deadline passed while the write was being committed")
)

// ValidationError says which field of a request is invalid and why. It matches ErrInvalid.
type ValidationError struct {
	Field  string // field name as on the wire (field_<n>, id, version_comment) or condition text; may be empty
	Reason string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// Invalid builds a ValidationError for field.
func Invalid(field, reason string) error { return &ValidationError{Field: field, Reason: reason} }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
