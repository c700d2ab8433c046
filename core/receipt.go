package core

import (
	"context"
	"errors"
)

// Receipt is the outcome of an applied write kept under the idempotency key its client sent, so that a retry
// of the write with the same key gets the same outcome without applying anything again. Receipts are kept per
// account, user and key, in the store (they hold across core replicas and restarts), for ReceiptTTL.
type Receipt struct {
	UserID      int64
	Key         string // the Idempotency-Key as sent
	Fingerprint string // what identifies the request: its method, target and body (digested)
	Status      int    // the HTTP status the write was answered with
	RecordID    int64  // the record a create made; the store sets it inside the create's transaction
	Time        int64  // UNIX seconds when the write was applied; a receipt older than ReceiptTTL is forgotten
}

// ReceiptTTL is how long a receipt is kept: a day, as the IETF Idempotency-Key draft suggests a server
// announce; a retry later than that is a new request.
const ReceiptTTL int64 = 24 * 60 * 60

// ErrDuplicate is returned by a write whose receipt's key is kept already (a retry that raced the first
// attempt): nothing of the write was applied.
var ErrDuplicate = errors.New("idempotency key already used")

type receiptKey struct{}

// WithReceipt returns a context under which the next record write (CreateRecord, UpdateRecord, DeleteRecord)
// keeps r in its own transaction, or fails with ErrDuplicate, applying nothing, when the account already keeps
// a live receipt of that user and key. The write is then either applied once with its receipt, or not at all.
func WithReceipt(ctx context.Context, r *Receipt) context.Context {
	return context.WithValue(ctx, receiptKey{}, r)
}

// ReceiptOf returns the receipt a write must keep (see WithReceipt), or nil.
func ReceiptOf(ctx context.Context) *Receipt {
	r, _ := ctx.Value(receiptKey{}).(*Receipt)
	return r
}
