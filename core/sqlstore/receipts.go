package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reqgate/reqgate/core"
)

const (
	qReceipt = `SELECT fingerprint, status, record_id, time FROM receipts
		WHERE account_id = $1 AND user_id = $2 AND idem_key = $3 AND time > $4`
	// qKeepReceipt inserts a receipt, or replaces one that expired ($8 is the expiry cut-off); it returns no
	// row when a live receipt holds the key. Two writes racing with one key queue on the key's row (PostgreSQL)
	// or on the writer (SQLite), so exactly one of them keeps its receipt and the other learns it lost.
	qKeepReceipt = `INSERT INTO receipts (account_id, user_id, idem_key, fingerprint, status, record_id, time)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (account_id, user_id, idem_key) DO UPDATE SET fingerprint = excluded.fingerprint,
		status = excluded.status, record_id = excluded.record_id, time = excluded.time
		WHERE receipts.time <= $8 RETURNING 1`
	// qPruneReceipts forgets an account's expired receipts, so each write with a key clears about as many as it
	// adds and the table holds a day of them.
	qPruneReceipts = "DELETE FROM receipts WHERE account_id = $1 AND time <= $2"
)

// Receipt returns the live receipt of a user's idempotency key, or core.ErrNotFound.
func (s *Store) Receipt(ctx context.Context, accountID, userID int64, key string, now int64) (core.Receipt, error) {
	r := core.Receipt{UserID: userID, Key: key}
	err := s.db.QueryRow(ctx, qReceipt, accountID, userID, key, now-core.ReceiptTTL).
		Scan(&r.Fingerprint, &r.Status, &r.RecordID, &r.Time)
	if err != nil {
		return core.Receipt{}, fmt.Errorf("receipt: %w", notFound(err))
	}
	return r, nil
}

// keepReceipt keeps the receipt the write's context carries, if any, in the write's transaction:
// core.ErrDuplicate when a live receipt holds its key (the caller's transaction then rolls back).
func keepReceipt(ctx context.Context, tx Tx, accountID int64) error {
	r := core.ReceiptOf(ctx)
	if r == nil {
		return nil
	}
	cut := r.Time - core.ReceiptTTL
	var one int
	err := tx.QueryRow(ctx, qKeepReceipt, accountID, r.UserID, r.Key, r.Fingerprint, r.Status, r.RecordID, r.Time,
		cut).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return core.ErrDuplicate
	}
	if err != nil {
		return fmt.Errorf("keep receipt: %w", err)
	}
	if err := tx.Exec(ctx, qPruneReceipts, accountID, cut); err != nil {
		return fmt.Errorf("prune receipts: %w", err)
	}
	return nil
}
